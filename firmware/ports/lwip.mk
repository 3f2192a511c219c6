# lwIP's sources for every build that compiles lwIP (firmware/Makefile,
# cortex_m/cortex_m.mk, host/server.mk and the host tests in host/Makefile),
# taken from the list lwIP ships (src/Filelists.mk), and the rule that says how
# to get them when they are missing. A build sets LWIP_DIR (lwIP's sources as
# `make deps` unpacks them, build/lwip) before including this file.
#
# LWIP_SRCS: lwIP's core, IPv4 and Ethernet, all that a raw-API NO_SYS build
# can use. A module a port's lwipopts.h turns off compiles to an empty object
# (lwIP guards each one with its option), and a firmware image's link drops the
# functions its port never calls (--gc-sections), so every build takes the
# same list.
# LWIPOPTS_BASE: the settings every lwipopts.h includes, for builds that list
# their headers as prerequisites.
# lwIP's sources must carry LiteDAV's patches (firmware/lwip-patches, applied by
# `make deps`): a build refuses sources that do not.

LWIPDIR       := $(LWIP_DIR)/src
LWIPOPTS_BASE := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/lwipopts_base.h
LWIP_PATCHES  := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../../scripts/lwip_patches.sh)

# lwIP is LiteDAV's only with its patches (firmware/lwip-patches): sources without them, or with
# another version of them, are refused rather than built.
ifneq ($(wildcard $(LWIPDIR)/core/tcp.c),)
ifneq ($(shell $(LWIP_PATCHES) check $(LWIP_DIR) && echo patched),patched)
$(error lwIP in $(LWIP_DIR) does not carry firmware/lwip-patches as they are now: run 'make deps')
endif
endif

ifneq ($(wildcard $(LWIPDIR)/Filelists.mk),)
include $(LWIPDIR)/Filelists.mk
LWIP_SRCS := $(COREFILES) $(CORE4FILES) $(LWIPDIR)/netif/ethernet.c
else
# Not unpacked yet: one file stands for them all, and the rule below says what to run.
LWIP_SRCS := $(LWIPDIR)/core/tcp.c
endif

# The including makefile's own first target stays its default goal.
lwip_default_goal := $(.DEFAULT_GOAL)
$(LWIPDIR)/core/tcp.c:
	@echo "missing lwIP sources in $(LWIP_DIR): run 'make deps'" >&2
	@false
.DEFAULT_GOAL := $(lwip_default_goal)
