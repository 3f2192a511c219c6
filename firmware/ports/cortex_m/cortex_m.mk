# Build settings shared by the Cortex-M3 ports (lm3s9b95, gowin_emcu): the
# toolchain, compiler and linker flags, and lwIP's sources (../lwip.mk). A port
# sets PORT_DIR, TOP and LWIP_DIR, includes this file, then adds its own -I/-D
# flags to CFLAGS and its sources.
#
# Debian's arm-none-eabi-gcc and newlib-nano; lwIP from build/lwip (`make deps`).

# The port's own `all` stays the default goal, whatever rules come first.
.DEFAULT_GOAL := all

CORTEX_M := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

CROSS   ?= arm-none-eabi-
CC      := $(CROSS)gcc
OBJCOPY := $(CROSS)objcopy
SIZE    := $(CROSS)size

CPU     := -mcpu=cortex-m3 -mthumb
# Debian's arm-none-eabi-gcc finds its own freestanding <stdint.h> before
# newlib's, and newlib's <inttypes.h> then lacks PRIu64 & co.: put newlib's
# headers (beside its libc.a) first.
NEWLIB_INC := $(abspath $(dir $(shell $(CC) -print-file-name=libc.a))../include)
CFLAGS  := $(CPU) -std=gnu99 -Os -g -Wall -Wextra -Wno-unused-parameter \
           -Werror=implicit-function-declaration -ffunction-sections -fdata-sections -fno-common \
           -specs=nano.specs -isystem $(NEWLIB_INC) \
           -I$(PORT_DIR) -I$(CORTEX_M) -I$(LWIP_DIR)/src/include
LDFLAGS := $(CPU) -specs=nano.specs -nostartfiles -Wl,--gc-sections -L$(PORT_DIR) -L$(CORTEX_M)

include $(CORTEX_M)/../lwip.mk

# The Cortex-M3 code every port links: start-up, run time, SysTick time base.
CM_SRCS := $(wildcard $(CORTEX_M)/*.c)
CM_HDRS := $(wildcard $(CORTEX_M)/*.h $(CORTEX_M)/arch/*.h)
