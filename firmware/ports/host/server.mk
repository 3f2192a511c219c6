# litedav-host: the whole firmware (firmware/app + lwIP, NO_SYS) as a native
# Linux server whose Ethernet is an in-process libslirp. Included from this
# directory's Makefile:
#
#   make -C firmware/ports/host server              build/host/litedav-host (ASan + UBSan)
#   make -C firmware/ports/host server SANITIZE=0   optimized, no sanitizers (benchmarks, fuzzing)
#   build/host/litedav-host --port 8080 [--store FILE]
#   make ... server SERVER_DEFS="-DDAV_STORE_INDEX_SLOTS=32768"   other app limits (app_config.h),
#                                                   e.g. to write a store image for a port that has them
#                                                   (in an OUT of its own: objects do not track these flags)
#
# Needs lwIP in build/lwip (`make deps`) and libslirp-dev. The libslirp glue
# (slirp/ at the top, shared with the simulator's slirp_ethernet module) is
# compiled in.

SERVER_PORT_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
SERVER_TOP      := $(abspath $(SERVER_PORT_DIR)/../../..)
SERVER_GLUE_DIR := $(SERVER_TOP)/slirp
OUT             ?= $(SERVER_TOP)/build/host
LWIP_DIR        ?= $(SERVER_TOP)/build/lwip
SANITIZE        ?= 1
SERVER_DEFS     ?=

SERVER_BIN := $(OUT)/litedav-host
ifeq ($(SANITIZE),0)
SERVER_OBJ      := $(OUT)/server-fast
SERVER_MODE     := -O2 -g
else
SERVER_OBJ      := $(OUT)/server-asan
SERVER_MODE     := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif

# libslirp's pkg-config file requires glib-2.0's, which only the glib headers
# package ships; libslirp.h itself needs no glib headers, so fall back to
# linking it directly.
SERVER_SLIRP_CFLAGS := $(shell pkg-config --cflags slirp 2>/dev/null)
SERVER_SLIRP_LIBS   := $(or $(shell pkg-config --libs slirp 2>/dev/null),-lslirp)

SERVER_CFLAGS := -std=c99 $(SERVER_MODE) -Wall -Wextra -Wno-unused-parameter \
                 -Werror=implicit-function-declaration -fno-common \
                 -I$(SERVER_PORT_DIR) $(APP_INCLUDES) -I$(LWIP_DIR)/src/include $(SERVER_SLIRP_CFLAGS) \
                 -I$(SERVER_GLUE_DIR) $(SERVER_DEFS)
SERVER_LDFLAGS := $(SERVER_MODE)
SERVER_LIBS    := $(SERVER_SLIRP_LIBS)

include $(SERVER_PORT_DIR)/../lwip.mk
# The whole app, except what the host's unit tests build (they share build/host).
SERVER_APP_SRCS  := $(APP_SRCS)
SERVER_PORT_SRCS := $(addprefix $(SERVER_PORT_DIR)/, main.c port.c slirp_netif.c) \
                    $(wildcard $(SERVER_PORT_DIR)/flash_file.c)
SERVER_STATIC    := $(wildcard $(SERVER_TOP)/firmware/static/*)
SERVER_GLUE_SRCS := $(SERVER_GLUE_DIR)/slirp_glue.c

SERVER_OBJS := $(SERVER_OBJ)/gen/static_data.o \
               $(patsubst $(LWIP_DIR)/%.c,$(SERVER_OBJ)/lwip/%.o,$(LWIP_SRCS)) \
               $(patsubst $(APP)/%.c,$(SERVER_OBJ)/app/%.o,$(SERVER_APP_SRCS)) \
               $(patsubst $(SERVER_PORT_DIR)/%.c,$(SERVER_OBJ)/port/%.o,$(SERVER_PORT_SRCS)) \
               $(patsubst $(SERVER_GLUE_DIR)/%.c,$(SERVER_OBJ)/glue/%.o,$(SERVER_GLUE_SRCS))

.PHONY: server
server: $(SERVER_BIN)

# One binary path for both modes: relink when the mode changes.
$(SERVER_BIN): $(SERVER_OBJS) $(OUT)/litedav-host.mode
	$(CC) $(SERVER_LDFLAGS) -o $@ $(SERVER_OBJS) $(SERVER_LIBS)

$(OUT)/litedav-host.mode: FORCE_SERVER_MODE
	@mkdir -p $(dir $@)
	@echo "$(SERVER_OBJ)" | cmp -s - $@ || echo "$(SERVER_OBJ)" > $@

.PHONY: FORCE_SERVER_MODE
FORCE_SERVER_MODE:

# lwIP's own warnings are not ours to fix.
$(SERVER_OBJ)/lwip/%.o: $(LWIP_DIR)/%.c | $(LWIP_DIR)/src/core/tcp.c
	@mkdir -p $(dir $@)
	$(CC) $(SERVER_CFLAGS) -w -MMD -MP -c -o $@ $<

$(SERVER_OBJ)/app/%.o: $(APP)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SERVER_CFLAGS) -MMD -MP -c -o $@ $<

$(SERVER_OBJ)/port/%.o: $(SERVER_PORT_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SERVER_CFLAGS) -MMD -MP -c -o $@ $<

$(SERVER_OBJ)/glue/%.o: $(SERVER_GLUE_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SERVER_CFLAGS) -MMD -MP -c -o $@ $<

$(SERVER_OBJ)/gen/static_data.c: $(SERVER_STATIC) $(SERVER_TOP)/firmware/tools/embed_static.py
	@mkdir -p $(dir $@)
	python3 $(SERVER_TOP)/firmware/tools/embed_static.py $@ $(SERVER_STATIC)

$(SERVER_OBJ)/gen/static_data.o: $(SERVER_OBJ)/gen/static_data.c
	$(CC) $(SERVER_CFLAGS) -MMD -MP -c -o $@ $<

-include $(SERVER_OBJS:.o=.d)
