# The application (HTTP, WebDAV, CalDAV, the store and the TCP extensions they need), one folder
# per layer. Every build of it includes this file: the LiteX SoC (firmware/Makefile), the LM3S9B95
# (firmware/ports/lm3s9b95), the host (firmware/ports/host) and the Tang Nano 4K's EMCU
# (firmware/ports/gowin_emcu, which links no layer but shares the headers).
#
# APP_LAYERS is the order of the layers, lowest first. A file includes headers of its own layer
# and of layers before it, never after: tests/test_firmware_layers.py reads this line and checks
# every #include under firmware/app. docs/architecture.md says what each layer holds.
APP_LAYERS := platform util store net http dav caldav appliance

APP      := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
APP_DIRS := $(addprefix $(APP)/,$(APP_LAYERS))
APP_SRCS := $(foreach dir,$(APP_DIRS),$(wildcard $(dir)/*.c))
APP_HDRS := $(foreach dir,$(APP_DIRS),$(wildcard $(dir)/*.h))
# Headers are named with their layer ("http/httpd.h"), from this one include directory.
APP_INCLUDES := -I$(APP)
