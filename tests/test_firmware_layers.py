"""firmware/app is built in layers (firmware/app/app.mk, APP_LAYERS, lowest first): a file
includes headers of its own layer and of the layers below it, never of a layer above. This test
reads every #include under firmware/app and fails on one that reaches up, or on a layer folder
(or a loose source file) that APP_LAYERS does not name."""
import os
import re

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = os.path.join(TOP, "firmware", "app")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def app_layers(app_mk=os.path.join(APP, "app.mk")):
    """The layer order, lowest first, from app.mk's `APP_LAYERS := ...` line."""
    with open(app_mk) as f:
        for line in f:
            m = re.match(r"\s*APP_LAYERS\s*:?=\s*(.*)$", line)
            if m:
                return m.group(1).split()
    raise AssertionError(f"{app_mk} has no APP_LAYERS line")


def app_sources(app=APP):
    for folder, _, files in os.walk(app):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.join(folder, name)


def layer_of(path, app=APP):
    """The layer folder a file under firmware/app is in, or None for a file at its top."""
    rel = os.path.relpath(path, app)
    return rel.split(os.sep)[0] if os.sep in rel else None


def upward_includes(app=APP, layers=None):
    """(file, included, file's layer, included's layer) for every include that reaches a layer
    above its file's, or into a folder that is not a layer."""
    layers = layers or app_layers(os.path.join(app, "app.mk"))
    rank = {name: i for i, name in enumerate(layers)}
    found = []
    for path in app_sources(app):
        own = layer_of(path, app)
        with open(path, errors="replace") as f:
            text = f.read()
        for included in INCLUDE.findall(text):
            target = os.path.normpath(os.path.join(os.path.dirname(path), included))
            if not os.path.exists(target):
                target = os.path.normpath(os.path.join(app, included))
            if not os.path.exists(target) or not target.startswith(app + os.sep):
                continue  # lwIP, libc, the port's headers, files outside the app
            theirs = layer_of(target, app)
            if own not in rank or theirs not in rank or rank[theirs] > rank[own]:
                found.append((os.path.relpath(path, app), included, own, theirs))
    return found


def test_every_layer_folder_is_in_the_order():
    layers = app_layers()
    assert len(set(layers)) == len(layers), f"a layer named twice in APP_LAYERS: {layers}"
    folders = {d for d in os.listdir(APP) if os.path.isdir(os.path.join(APP, d))}
    assert folders == set(layers), (
        f"firmware/app's folders {sorted(folders)} and app.mk's APP_LAYERS {layers} differ")
    loose = [os.path.basename(p) for p in app_sources() if layer_of(p) is None]
    assert not loose, f"source files outside every layer folder: {loose}"


def test_no_include_reaches_a_higher_layer():
    found = upward_includes()
    assert not found, "includes that reach up (file: included, its layer -> theirs):\n" + "\n".join(
        f"  {path}: {inc} ({own} -> {theirs})" for path, inc, own, theirs in found)


def test_the_check_sees_an_upward_include(tmp_path):
    """The checker itself: a lower layer including a higher one is found, the other way is not."""
    app = tmp_path / "app"
    for layer in ("low", "high"):
        (app / layer).mkdir(parents=True)
    (app / "app.mk").write_text("APP_LAYERS := low high\n")
    (app / "high" / "h.h").write_text('#include "low/l.h"\n')
    (app / "low" / "l.h").write_text("\n")
    (app / "low" / "l.c").write_text('#include "low/l.h"\n#include <stdio.h>\n#include "lwip/tcp.h"\n')
    assert upward_includes(str(app)) == []
    (app / "low" / "l.c").write_text('#include "high/h.h"\n')
    assert upward_includes(str(app)) == [("low/l.c", "high/h.h", "low", "high")]
    (app / "low" / "m.c").write_text('#include "../high/h.h"\n')
    assert ("low/m.c", "../high/h.h", "low", "high") in upward_includes(str(app))
