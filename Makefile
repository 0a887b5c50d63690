# SPDX-License-Identifier: MIT
# mach6 — the two commands (and a few more). Works as root on a fresh Debian 12:
# missing packages are installed with apt-get, then meson builds in build/.
#   make run    build, start the demo and show it (GAME=love: the LÖVE demo)
#   make test   build and run the whole meson test suite (UI tests under Xvfb)
#   make bench  build and print the benchmark figures as JSON lines
#   make fuzz   fuzz the capture loader, exporters, ingest, reader and remote protocol (FUZZ_SECONDS=60 each)

BUILD ?= build
SHELL := /bin/bash

DEB_PACKAGES := meson ninja-build pkg-config gcc g++ libc6-dev \
	libglib2.0-dev libglib2.0-bin libjson-glib-dev libgtk-4-dev libadwaita-1-dev \
	gettext desktop-file-utils appstream xvfb xauth xfonts-base \
	librsvg2-bin poppler-utils python3 libx11-dev libxtst6 locales \
	clang lua5.4 liblua5.4-dev luajit libluajit-5.1-dev love prometheus \
	glib-networking libzstd-dev liblz4-dev libgnutls28-dev strace \
	adwaita-icon-theme librsvg2-common shared-mime-info libgtk-4-bin \
	libdw-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build run test bench fuzz clean

all: build

# One dpkg-query for all of them; apt-get only when one is missing.
deps:
	@installed=" $$(dpkg-query -W -f='$${db:Status-Abbrev} $${Package}\n' $(DEB_PACKAGES) 2>/dev/null \
	  | sed -n 's/^.i. //p' | tr '\n' ' ')"; \
	missing=""; \
	for p in $(DEB_PACKAGES); do \
	  case "$$installed" in *" $$p "*) ;; *) missing="$$missing $$p" ;; esac; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "mach6: installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=debugoptimized

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	@bash tools/run.sh $(BUILD)

test: build
	@bash tools/test.sh $(BUILD)

bench: build
	@bash tools/bench.sh $(BUILD)

# libFuzzer harnesses, FUZZ_SECONDS each (default 60): see tools/fuzz.sh.
fuzz: build
	@bash tools/fuzz.sh $(BUILD)

clean:
	rm -rf $(BUILD)
