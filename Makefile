# fabrik_ros developer entry points. Every target installs what it needs on a fresh
# Debian 12 machine (Python 3.11) and skips what is already there.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BUILD := build
# make demo BOARD=simavr runs the real Uno firmware in simavr instead of the Python board.
BOARD ?= python

# Debian packages for the firmware and its simulator (hardware/, test/hardware/), and the
# headless browser the web_view tests drive (test/webview/).
APT_PACKAGES := gcc-avr avr-libc arduino-core-avr arduino-mk simavr libsimavr-dev libelf-dev \
	chromium chromium-driver
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# DDS stays on loopback, in a domain of its own per run; ROS writes logs into the build tree.
export RMW_IMPLEMENTATION := rmw_fastrtps_cpp
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export ROS_LOCALHOST_ONLY := 1
ifeq ($(origin ROS_DOMAIN_ID),undefined)
ROS_DOMAIN_ID := $(shell shuf -i 1-100 -n 1)
endif
export ROS_DOMAIN_ID
export ROS_HOME := $(CURDIR)/$(BUILD)/ros
export ROS_LOG_DIR := $(CURDIR)/$(BUILD)/ros/log
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help setup apt test demo web bench lint soak clean

help:
	@echo 'make setup   create .venv with the pinned ROS 2 wheels, tools and the package (editable)'
	@echo 'make test    setup, then the whole test suite'
	@echo 'make demo    run the arm on the simulated servo board and print what it did'
	@echo 'make web     the arm on the simulated board in a browser (http://127.0.0.1:8080)'
	@echo 'make bench   run the benchmarks under bench/ and print their figures'
	@echo 'make soak    the long reliability runs (about 20 minutes)'
	@echo 'make lint    ruff and the docstring check'
	@echo 'make clean   remove .venv and build outputs'

setup: $(STAMP) apt

$(STAMP): requirements-dev.txt setup.py setup.cfg
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $@

apt:
	@missing=$$(for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "apt-get install $$missing"; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

test: setup
	@mkdir -p $(ROS_LOG_DIR)
	$(PY) -m pytest

demo: setup
	@mkdir -p $(ROS_LOG_DIR)
	$(PY) -m fabrik_ros.demo --board $(BOARD) $(DEMO_ARGS)

web: setup
	@mkdir -p $(ROS_LOG_DIR)
	$(PY) -m fabrik_ros.webview.pipeline $(WEB_ARGS)

soak: setup
	@mkdir -p $(ROS_LOG_DIR)
	$(PY) -m pytest -m soak -p no:cacheprovider --timeout=1800 test/reliability

bench: setup
	@mkdir -p $(ROS_LOG_DIR) bench/out
	$(PY) -m pip install --quiet -r bench/requirements.txt
	$(PY) bench/run_all.py

lint: setup
	$(VENV)/bin/ruff check fabrik_ros test bench launch setup.py
	$(VENV)/bin/pydocstyle --convention=pep257 --add-ignore=D100,D104,D105,D107 fabrik_ros

clean:
	rm -rf $(VENV) $(BUILD) hardware/build bench/out *.egg-info .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
