#!/usr/bin/env bash
# Generate and install interfaces/<distro>/control_msgs into a venv that holds that distro's ROS 2
# wheels and the generator wheels of requirements-build-<distro>.txt (`make setup` calls this).
#   interfaces/build.sh VENV DISTRO BUILD_DIR
# Idempotent: running it again rebuilds into the same BUILD_DIR and reinstalls the same files.
set -euo pipefail

venv=$(cd "$1" && pwd)
distro=$2
build=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$here/$distro/control_msgs
py=$venv/bin/python
if [ ! -f "$source_dir/package.xml" ]; then
    echo "no interface definitions for $distro in $source_dir" >&2
    exit 1
fi

# The wheels' exported Python generator targets name the wheel builder's Python and numpy include
# folders; point them at this venv's (the generated Python extension includes both).
read -r py_include numpy_include < <("$py" -c \
    'import sysconfig, numpy; print(sysconfig.get_paths()["include"], numpy.get_include())')
pattern='^(  INTERFACE_INCLUDE_DIRECTORIES ")[^"]*python3[^"]*"'
for export_file in "$venv"/share/*/cmake/export_*__rosidl_generator_pyExport.cmake; do
    sed -i -E "s|$pattern|\1$py_include;$numpy_include\"|" "$export_file"
done

# The generator scripts run under the venv's Python; ament's cmake packages are in the venv, and
# only there: a sourced ROS install's paths stay out of the build.
# Installed into the venv's prefix: the libraries land in <venv>/lib beside the ROS wheels' own,
# which ros_wheels_bootstrapper puts on LD_LIBRARY_PATH whenever the venv's Python starts (a
# console script or a subprocess too); the RUNPATH lets ours find theirs even without it.
export PATH=$venv/bin:$PATH AMENT_PREFIX_PATH=$venv
unset CMAKE_PREFIX_PATH PYTHONPATH LD_LIBRARY_PATH _ROS_WHEELS_BOOTSTRAP_COMPLETE
mkdir -p "$build"
cmake -S "$source_dir" -B "$build" -Wno-dev \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$venv" \
    -DCMAKE_PREFIX_PATH="$venv" \
    -DCMAKE_INSTALL_RPATH="$venv/lib" \
    -DPython3_EXECUTABLE="$py" \
    -DBUILD_TESTING=OFF >"$build/configure.log" \
    || { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)" >"$build/build.log" 2>&1 \
    || { tail -n 60 "$build/build.log" >&2; exit 1; }
cmake --install "$build" >"$build/install.log"
