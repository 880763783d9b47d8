# Two commands set up everything on a fresh Debian machine: `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
PYTHON ?= python3
VENV := Tests/interop/.venv
DEB_PACKAGES := pkg-config libmicrohttpd-dev libssl-dev libsqlite3-dev zlib1g-dev libcurl4-openssl-dev curl python3 python3-venv libqrencode-dev libzxing-dev libpng-dev
BENCH_PACKAGES := wrk
# The interop tests check the HTML pages in headless Chromium.
TEST_PACKAGES := chromium chromium-driver
HOST ?= 127.0.0.1
PORT ?= 8080

.PHONY: run build test unit-test interop-test bench deps bench-deps test-deps clean

# Installs only what is missing; apt-get update runs first because a fresh image has no lists.
define ensure_debs
	@missing=""; for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
endef

deps:
	$(call ensure_debs,$(DEB_PACKAGES))

bench-deps: deps
	$(call ensure_debs,$(BENCH_PACKAGES))

test-deps: deps
	$(call ensure_debs,$(TEST_PACKAGES))

build: deps
	$(SWIFT) build -c release

run: build
	.build/release/trustbed serve --host $(HOST) --port $(PORT)

test: unit-test interop-test

unit-test: deps $(VENV)/.installed
	$(SWIFT) test

$(VENV)/.installed: Tests/interop/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r Tests/interop/requirements.txt
	touch $@

interop-test: build test-deps $(VENV)/.installed
	TRUSTBED_BIN=$(CURDIR)/.build/release/trustbed $(VENV)/bin/python -m pytest -q Tests/interop

bench: build bench-deps
	bash Tests/bench/run.sh $(CURDIR)/.build/release/trustbed

clean:
	rm -rf .build $(VENV)
