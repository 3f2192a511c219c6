# LiteDAV: the two commands that matter are `make demo` and `make test`.
# Every target installs what it needs first (make deps is idempotent).

PYTHON ?= python3
PORT   ?= 8080
NIC    ?=
BOARD  ?=
BUILD  := build/sim
# litedav-sim's SoC: the ideal SoC with LiteEth's MAC unless NIC= or BOARD= (a board model, with
# its board's NIC unless NIC= says otherwise) choose another
SIM_SOC = $(if $(BOARD),--board $(BOARD)) $(if $(NIC),--nic $(NIC))

.PHONY: help deps sim firmware demo demo-lm3s flash-lm3s9b95 run host test soak bench resources bitstreams fuzz clean

help:
	@echo "make demo      install, build and run the simulated appliance on http://127.0.0.1:$(PORT)/"
	@echo "make demo NIC=offload  the same with the offload NIC (DMA rings, checksum offload; build/sim-offload)"
	@echo "make demo BOARD=colorlight_i5  the Colorlight i5's SoC as built (75 MHz, SDRAM behind its L2, offload NIC, its 32 MiB store flash; MII): the board model, docs/board_model.md"
	@echo "make demo-lm3s the LM3S9B95 (Cortex-M3) port in QEMU's lm3s6965evb on http://127.0.0.1:8081/"
	@echo "make flash-lm3s9b95  build the LM3S9B95 image and flash a real board (FLASHER=openocd|lm4flash,"
	@echo "               ADAPTER=ek-lm3s9b9x|stellaris-eval|ti-icdi, ERASE_STORE=1; scripts/flash_lm3s9b95.sh --help)"
	@echo "make host      build and run the firmware natively on Linux (lwIP + libslirp) on http://127.0.0.1:$(PORT)/"
	@echo "make test      install, build and run every fast test"
	@echo "make deps      install Debian packages, lwIP sources and Python packages (idempotent)"
	@echo "make sim       build SoC headers, firmware and the Verilator model"
	@echo "make run       run the already built simulator (PORT=$(PORT))"
	@echo "make bench     plain LiteEth vs offload NIC: bulk GET/PUT, small GETs, latency at GMII and MII; LM3S port in QEMU: instructions per request; cycles per request vs idle connections; office calendar sync: a user's day on both NICs, OFFICE_CLIENTS (default 100, the whole office) clients at once on the offload NIC over the 100-user store, both again on the colorlight_i5 board model (store flash, MII, 75 MHz) (bench/results/latest.*); hours; the whole office is 2.55 G simulated cycles, ~1 hour of wall time for its sync plus ~5 min of boot when its simulator has a core to itself (OFFICE_CLIENTS=12: ~5 min of sync); the simulator's own speed, simulated cycles per wall second (sim_speed)"
	@echo "make resources  ECP5 LUT4/FF/BRAM of the offload NIC cores (Yosys synth_ecp5)"
	@echo "make bitstreams  every board's bitstream (build/<board>/: colorlight_i5 .bit, tang_nano_4k .fs + EMCU firmware), timing-checked, and its report (bench/results/fpga-<board>.*); slow"
	@echo "make soak      long reliability runs: 1,000 CalDAV transactions by 20 clients over a lossy link, 100 power cuts, 10 million executions per parser fuzzer (bench/results/reliability.*); hours"
	@echo "make fuzz      long randomized runs: gateware (cocotb) and host fuzzers/torture (LITEDAV_FUZZ=1)"
	@echo "make clean     remove build/"

deps:
	@bash scripts/deps.sh

sim: deps
	@$(PYTHON) -m litedav.sim.run build $(SIM_SOC)

firmware: deps
	@$(PYTHON) -m litedav.soc.build --platform sim >/dev/null
	@$(MAKE) --no-print-directory -C firmware SOC_BUILD=$(CURDIR)/$(BUILD)

demo: deps
	@$(PYTHON) -m litedav.sim.run demo $(SIM_SOC) --port $(PORT)

demo-lm3s: deps
	@$(MAKE) --no-print-directory -C firmware/ports/lm3s9b95 qemu PORT=8081

# The real-chip image (build/lm3s9b95/lm3s9b95/litedav.bin) onto a board on USB.
LM3S_IMAGE := $(CURDIR)/build/lm3s9b95/lm3s9b95/litedav.bin
flash-lm3s9b95: deps
	@$(MAKE) --no-print-directory -C firmware/ports/lm3s9b95 $(LM3S_IMAGE)
	@FLASHER=$(FLASHER) ADAPTER=$(ADAPTER) ERASE_STORE=$(ERASE_STORE) scripts/flash_lm3s9b95.sh $(LM3S_IMAGE)

run:
	@$(PYTHON) -m litedav.sim.run run $(SIM_SOC) --port $(PORT)

host: deps
	@$(MAKE) --no-print-directory -C firmware/ports/host server SANITIZE=0
	@build/host/litedav-host --port $(PORT) --store build/host/litedav.flash

test: deps
	@$(PYTHON) -m pytest -ra --durations=30 $(wildcard tests cocotb_tests)

# Clients syncing at once in make bench's office runs (office_sync --clients), each one user of the
# 100-user office: 100, the whole office (issue 9), ~1 hour of wall time on the ideal SoC and
# several on the Colorlight i5 board model (about 3x slower, its store read through SPI); 12 for a
# quicker look (bench/README.md). LiteEth's office is not run: with 8 clients a PROPFIND dropped by
# its two RX slots left a client in lwIP's retransmission backoff (bench/README.md).
OFFICE_CLIENTS ?= 100
bench: deps
	@$(PYTHON) -m litedav.bench.nic_compare --out bench/results
	@$(PYTHON) -m litedav.bench.small_get_profile --out bench/results
	@$(PYTHON) -m litedav.bench.lm3s_instructions --out bench/results
	@nice -n 5 $(PYTHON) -m litedav.bench.lm3s_scale --out bench/results
	@nice -n 5 $(PYTHON) -m litedav.bench.lm3s_scale --out bench/results --no-idle --store-kib 256
	@$(PYTHON) -m litedav.bench.idle_conns --out bench/results
	@$(PYTHON) -m litedav.bench.idle_conns --soc colorlight_i5 --out bench/results
	@$(PYTHON) -m litedav.bench.office_sync --nic liteeth offload --no-office --out bench/results
	@$(PYTHON) -m litedav.bench.office_sync --nic offload --no-day --users 100 --clients $(OFFICE_CLIENTS) --out bench/results
	@$(PYTHON) -m litedav.bench.office_sync --soc colorlight_i5 --no-office --out bench/results
	@$(PYTHON) -m litedav.bench.office_sync --soc colorlight_i5 --no-day --users 100 --clients $(OFFICE_CLIENTS) --out bench/results
	@$(PYTHON) -m litedav.bench.sim_speed --soc ideal colorlight_i5 --out bench/results
	@$(PYTHON) -m litedav.bench.memory_path --out bench/results

resources: deps
	@$(PYTHON) -m litedav.bench.gateware_resources --json bench/results/gateware_resources.json

BOARDS ?= colorlight_i5 tang_nano_4k
bitstreams: deps
	@set -e; for board in $(BOARDS); do $(PYTHON) -m litedav.bench.fpga_report --board $$board; done

# Long reliability runs (LITEDAV_SOAK=1 selects each test's long variant); every one records its
# figures as a section of bench/results/reliability.{json,md} (tests/reliability_report.py).
SOAK_TESTS ?= tests/test_sim_faults.py::test_caldav_transactions_survive_a_lossy_link \
              tests/test_sim_powerfail.py tests/test_host_caldav_parsers.py::test_fuzz \
              tests/test_sim_malformed.py::test_good_traffic_flows_through_malformed_frames \
              tests/test_sim_floods.py tests/test_sim_idle_conns.py
soak: deps
	@LITEDAV_SOAK=1 LITEDAV_FAULT_TRANSACTIONS=1000 LITEDAV_FAULT_CLIENTS=20 \
	 LITEDAV_RELIABILITY_REPORT=$(CURDIR)/bench/results/reliability.json \
	 $(PYTHON) -m pytest -ra -s $(SOAK_TESTS)

fuzz: deps
	@LITEDAV_FUZZ=1 $(PYTHON) -m pytest -ra -s $(wildcard cocotb_tests tests/test_host_*.py)

clean:
	rm -rf build cocotb_tests/sim_build
