# fabrik_ros developer entry points. Every target installs what it needs on a fresh
# Debian 12 machine (Python 3.11) and skips what is already there.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
BUILD := build
# make demo BOARD=simavr runs the real Uno firmware in simavr instead of the Python board.
BOARD ?= python
# make demo PROTOCOL=feetech (or dynamixel) runs the SO-101 on a simulated servo bus instead.
PROTOCOL ?= native

# ROS 2 distros whose PyPI wheels the suite runs on, each in a venv of its own: Kilted in .venv,
# the others in .venv-<distro>. `make test` runs every one; `make <target> ROS_DISTRO=jazzy` one.
# Only a ROS_DISTRO given on the command line counts: a sourced ROS install exports its own.
DISTROS := kilted jazzy
ifeq ($(origin ROS_DISTRO),command line)
ifeq ($(filter $(ROS_DISTRO),$(DISTROS)),)
$(error ROS_DISTRO=$(ROS_DISTRO) is not one of: $(DISTROS))
endif
TEST_DISTROS := $(ROS_DISTRO)
else
ROS_DISTRO := kilted
TEST_DISTROS := $(DISTROS)
endif
export ROS_DISTRO
VENV := $(if $(filter kilted,$(ROS_DISTRO)),.venv,.venv-$(ROS_DISTRO))
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CONTROL_MSGS_STAMP := $(VENV)/.control_msgs

# Debian packages for the venvs (python3-venv), the generated control_msgs (cmake, g++,
# python3-dev), the firmware and its simulator (hardware/, test/hardware/), and the headless
# browser the web_view tests drive (test/webview/).
APT_PACKAGES := python3-venv cmake g++ python3-dev gcc-avr avr-libc arduino-core-avr arduino-mk \
	simavr libsimavr-dev libelf-dev chromium chromium-driver
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# DDS stays on loopback, the way this distro understands (fabrik_ros/ros_env.py decides, for the
# tests, benchmarks and demo too); each Python run picks a random domain of its own. ROS writes
# logs into the build tree.
ROS_ENV_MK := $(BUILD)/ros_env.$(ROS_DISTRO).mk
$(shell mkdir -p $(BUILD) && $(PYTHON) -m fabrik_ros.ros_env --make --distro $(ROS_DISTRO) \
    > $(ROS_ENV_MK))
ifneq ($(.SHELLSTATUS),0)
$(error $(PYTHON) -m fabrik_ros.ros_env failed: DDS would not be kept on loopback)
endif
include $(ROS_ENV_MK)
export ROS_HOME := $(CURDIR)/$(BUILD)/ros
export ROS_LOG_DIR := $(CURDIR)/$(BUILD)/ros/log
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help setup apt test test-suite demo web bench bench-publish lint typecheck soak clean

help:
	@echo 'make setup   create .venv with the pinned ROS 2 wheels, tools and the package (editable)'
	@echo '             and generate control_msgs into it (interfaces/, not on PyPI)'
	@echo 'make test    setup, the quality gates (make lint), then the whole test suite on every'
	@echo '             distro of DISTROS ($(DISTROS)); ROS_DISTRO=jazzy: on that one only'
	@echo 'make demo    run the arm on the simulated servo board and print what it did'
	@echo '             (PROTOCOL=feetech or dynamixel: the SO-101 on a simulated servo bus)'
	@echo 'make web     the arm on the simulated board in a browser (http://127.0.0.1:8080)'
	@echo 'make bench   run the benchmarks under bench/, print their figures, write bench/out/'
	@echo 'make bench-publish  copy the last make bench results over the tracked ones'
	@echo 'make soak    the long reliability runs (about 20 minutes)'
	@echo 'make lint    the quality gates: ruff, pep257 docstrings'
	@echo 'make typecheck  mypy on fabrik_ros (strict on the pure core)'
	@echo 'make clean   remove the venvs and build outputs'
	@echo 'Any target takes ROS_DISTRO=kilted|jazzy (default kilted: .venv; jazzy: .venv-jazzy).'

setup: apt $(STAMP) $(CONTROL_MSGS_STAMP)

# apt first: a fresh Debian 12 has no python3-venv.
$(STAMP): requirements-$(ROS_DISTRO).txt requirements-build-$(ROS_DISTRO).txt \
    requirements-dev.txt setup.py setup.cfg | apt
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-$(ROS_DISTRO).txt \
	    -r requirements-build-$(ROS_DISTRO).txt -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $@

# control_msgs is not on PyPI: the interfaces of it the package uses, written per distro under
# interfaces/ as that distro's release defines them, are generated into the venv with the
# generator wheels of requirements-build-<distro>.txt (interfaces/build.sh). Rebuilt only when
# the definitions, the script or the pinned wheels change.
$(CONTROL_MSGS_STAMP): $(shell find interfaces/$(ROS_DISTRO)/control_msgs -type f) \
    interfaces/build.sh requirements-$(ROS_DISTRO).txt requirements-build-$(ROS_DISTRO).txt \
    | $(STAMP)
	interfaces/build.sh $(VENV) $(ROS_DISTRO) $(BUILD)/control_msgs/$(ROS_DISTRO)
	@touch $@

apt:
	@missing=$$(for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "apt-get install $$missing"; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The gates once, then the suite on each distro (both run even if the first fails).
test: lint
	@status=0; for distro in $(TEST_DISTROS); do \
	    echo "== test suite on ROS 2 $$distro"; \
	    $(MAKE) --no-print-directory test-suite ROS_DISTRO=$$distro || status=1; \
	done; exit $$status

# The suite on one distro (ROS_DISTRO), doctests of fabrik_ros included (see pytest.ini), in
# TEST_WORKERS processes (pytest-xdist, each worker in a DDS domain of its own, test/conftest.py):
# 2 halves the time on the 2-core CI machine. Tests go to whichever worker is free (--dist load):
# xdist 3.8's per-file scheduling fails the whole run (INTERNALERROR) once a worker that crashed
# or outlived a test's timeout is replaced (its issues 1189, 1362); per-test scheduling names
# that one test failed and runs the rest.
TEST_WORKERS ?= 2
test-suite: setup
	@mkdir -p $(ROS_LOG_DIR)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist load

demo: setup
	@mkdir -p $(ROS_LOG_DIR)
	$(PY) -m fabrik_ros.demo --board $(BOARD) --protocol $(PROTOCOL) $(DEMO_ARGS)

web: setup
	@mkdir -p $(ROS_LOG_DIR)
	$(PY) -m fabrik_ros.webview.pipeline $(WEB_ARGS)

soak: setup
	@mkdir -p $(ROS_LOG_DIR)
	$(PY) -m pytest -m soak -p no:cacheprovider --timeout=1800 test/reliability

# Measures into the untracked bench/out/ (node_cpu.py: the nodes' CPU and memory, node_cpu.json);
# bench-publish copies run_all's run over bench/results.json and bench/plots/, the figures
# docs/performance.md quotes.
bench: setup
	@mkdir -p $(ROS_LOG_DIR) bench/out
	$(PY) -m pip install --quiet -r bench/requirements.txt
	$(PY) bench/run_all.py
	$(PY) bench/node_cpu.py

bench-publish: setup
	$(PY) bench/run_all.py --publish

# The quality gates `make test` enforces.
lint: typecheck
	$(VENV)/bin/ruff check fabrik_ros test bench launch setup.py
	$(VENV)/bin/pydocstyle --convention=pep257 --add-ignore=D100,D104,D105,D107 fabrik_ros

# mypy on fabrik_ros; its settings (strict on the pure core) are in setup.cfg.
typecheck: setup
	$(VENV)/bin/mypy

clean:
	rm -rf .venv $(foreach d,$(DISTROS),.venv-$(d)) $(BUILD) hardware/build bench/out *.egg-info .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
