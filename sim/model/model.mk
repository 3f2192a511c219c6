# The simulated SoC's Verilator model (obj_dir/Vsim), built in a build's gateware folder by
# platforms/sim.py in place of LiteX's sim core Makefile. LiteX's C sources (its
# module loader, pad registry, config parser) are compiled from the installed LiteX package;
# what differs from LiteX's own build:
#   - no --trace unless TRACE=1: a traced model keeps per-signal change bookkeeping in every
#     eval and LiteX's glue flushes the VCD writer every step, even with no dump active
#   - the model's C++ at OPT_FAST (Verilator's default for the model's hot code is -Os, and
#     LiteX's -O3 in CFLAGS comes before it on the command line, so -Os wins)
#   - our own Verilator glue (model_glue.cpp), which has no tracer unless TRACE=1, evaluates the
#     model without Vsim::eval_step's per-call mutex and message checks, and takes $finish as
#     a flag (Verilator's runtime built with VL_USER_FINISH; model_glue.cpp has vl_finish)
#   - our own main loop (sim_main.c) in place of LiteX's sim.c: the same config, modules and
#     steps, with the config's clocks driven in the loop (sim_clock.h) instead of by LiteX's
#     clocker module; LiteX's loader (modules.c, parse.c, pads.c) is compiled as it is
#   - the model's C++ not split into small functions and files (LiteX's --output-split
#     5000 --output-split-cfuncs 500): one call per region, which the compiler optimizes whole
#   - optionally profile-guided (PGO, gcc's -fprofile-generate/-fprofile-use): platforms/sim.py
#     builds a training model, boots it once (sim/pgo.py) and builds again with its profile
#
# Variables (platforms/sim.py passes them; sim/run.py fingerprints them with the sources):
#   LITEX_SIM_CORE  LiteX's sim core folder (sim.c, modules/ ...)
#   VERILOG         Verilog sources, in order (VexRiscv's core, sim.v)
#   VERILATOR       the verilator to run (default: verilator on PATH)
#   OPT_FAST        optimization of the model's per-cycle code (default -O2)
#   OPT_SLOW        optimization of its once-only code (default: none, it compiles faster)
#   MARCH           extra target flags for the model (e.g. -march=native; default none)
#   TRACE=1         a VCD-tracing model (sim.vcd), for LiteX's --trace flow
#   PGO             empty: no profile; generate: a training model that writes its profile
#                   (*.gcda) into PGO_DIR when it exits (SIGUSR2 ends it cleanly: model_glue.cpp);
#                   use: the model optimized with PGO_DIR's profile. Both passes must build in the
#                   same obj_dir: gcc names a profile after its object file.
#   PGO_DIR         the profile's folder (default pgo-profile)
#   JOBS            parallel compiler jobs

LITEX_SIM_CORE ?= $(error LITEX_SIM_CORE is not set)
VERILOG        ?= $(error VERILOG is not set)
VERILATOR      ?= verilator
OPT_FAST       ?= -O2
OPT_SLOW       ?=
MARCH          ?=
TRACE          ?=
PGO            ?=
PGO_DIR        ?= pgo-profile
JOBS           ?= 2

HERE    := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
OBJ_DIR := $(abspath obj_dir)
CC      ?= gcc

# LiteX's sim core: the module loader, config parser and pad registry, plain C (its main loop,
# sim.c, is replaced by sim_main.c)
CORE_C    := modules.c pads.c parse.c libdylib.c
CORE_OBJS := $(addprefix $(OBJ_DIR)/core_,$(CORE_C:.c=.o))
CORE_CFLAGS := -O2 -g -Wall -I$(LITEX_SIM_CORE) $(if $(TRACE),-DLITEDAV_TRACE=1)
ifeq ($(PGO),generate)
# -fprofile-update=single: the model is one thread, and atomic counters would cost it
PGO_CFLAGS  := -fprofile-generate=$(abspath $(PGO_DIR)) -fprofile-update=single -DLITEDAV_PGO_TRAINING=1
PGO_LDFLAGS := -fprofile-generate=$(abspath $(PGO_DIR))
else ifeq ($(PGO),use)
# -fprofile-partial-training: code the training run never reached stays optimized for speed
# (not size); -Wno-coverage-mismatch: model_glue.cpp's training-only exit differs between passes
PGO_CFLAGS  := -fprofile-use=$(abspath $(PGO_DIR)) -fprofile-partial-training -Wno-missing-profile \
               -Wno-coverage-mismatch
PGO_LDFLAGS := -fprofile-use=$(abspath $(PGO_DIR))
else ifneq ($(PGO),)
$(error PGO=$(PGO): expected generate, use or nothing)
endif
LIBS := -lpthread -Wl,--no-as-needed -ljson-c -lz -lm -lstdc++ -ldl -levent

.PHONY: all modules model
all: modules model

# The sim modules (.so loaded at run time), with LiteX's module makefiles and the build's
# variables.mak (EXTRA_MOD_LIST: LiteDAV's own modules).
modules:
	mkdir -p modules
	$(MAKE) -C modules -f $(LITEX_SIM_CORE)/modules/Makefile

$(OBJ_DIR)/core_%.o: $(LITEX_SIM_CORE)/%.c
	mkdir -p $(OBJ_DIR)
	$(CC) -c $(CORE_CFLAGS) $(PGO_CFLAGS) -o $@ $<

$(OBJ_DIR)/sim_main.o: $(HERE)sim_main.c $(HERE)sim_clock.h
	mkdir -p $(OBJ_DIR)
	$(CC) -c $(CORE_CFLAGS) $(PGO_CFLAGS) -o $@ $<

model: $(CORE_OBJS) $(OBJ_DIR)/sim_main.o
	$(VERILATOR) --cc $(VERILOG) --top-module sim --exe -Mdir $(OBJ_DIR) \
		-O3 -Wno-fatal -Wno-BLKANDNBLK -Wno-WIDTH -Wno-COMBDLY -Wno-CASEINCOMPLETE \
		--unroll-count 256 --relative-includes \
		-DPRINTF_COND=0 \
		$(if $(TRACE),--trace --output-split-ctrace 500,) \
		$(abspath sim_init.cpp) $(HERE)model_glue.cpp $(OBJ_DIR)/sim_main.o $(CORE_OBJS) \
		-CFLAGS "-g -I$(abspath .) -I$(LITEX_SIM_CORE) $(MARCH) $(PGO_CFLAGS) -DVL_USER_FINISH=1 $(if $(TRACE),-DLITEDAV_TRACE=1)" \
		-LDFLAGS "$(MARCH) $(PGO_LDFLAGS) $(LIBS)"
	$(MAKE) -j$(JOBS) -C $(OBJ_DIR) -f Vsim.mk Vsim OPT_FAST="$(OPT_FAST)" OPT_SLOW="$(OPT_SLOW)" OPT_GLOBAL=-O2 \
		CFG_CXXFLAGS_PCH_I=-include
