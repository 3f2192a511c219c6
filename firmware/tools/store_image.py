#!/usr/bin/env python3
"""Read and check a LiteDAV store flash image on the host (the format of docs/store.md).

An independent reader of the on-flash format, written from the format description and not
from firmware/app/store/, so that a test can compare what the flash holds with what the
firmware acknowledged without trusting the firmware's own replay:

    store_image.py IMAGE [--block-size 4096] [--json]

prints the log (blocks, records, torn bytes), the collections with their objects, and the
problems found: records with a valid CRC whose payload is malformed, a log whose blocks do
not chain, two collections on one path. Exit status 0 when there is none, 1 otherwise, 2 for
an unreadable image or bad arguments.
"""
import argparse
import json
import struct
import sys
import zlib

BLOCK_MAGIC = b"LDB1"
BLOCK_HEADER = 24
FIRST_NONE = 0xFFFFFFFF
RECORD_MAGIC = 0x4C52
RECORD_VERSION = 1
RECORD_HEADER = 16
PAD, USER, COLL, COLL_DEL, FLOOR, PUT, DEL, MOVE_PUT, MOVE_DEL, PROPS_PUT, PROPS_MOVE_PUT = range(1, 12)
TYPE_NAMES = {PAD: "pad", USER: "user", COLL: "collection", COLL_DEL: "collection-delete",
              FLOOR: "floor", PUT: "put", DEL: "delete", MOVE_PUT: "move-put", MOVE_DEL: "move-delete",
              PROPS_PUT: "put-with-properties", PROPS_MOVE_PUT: "move-put-with-properties"}
DEAD_PROP = 0x80  # a property list's key of a dead property


class ImageError(Exception):
    pass


def block_header(image, block, block_size):
    raw = image[block * block_size:block * block_size + BLOCK_HEADER]
    seq, rec_seq_base, first, crc, state = struct.unpack_from("<5I", raw, 4)
    valid = raw[:4] == BLOCK_MAGIC and crc == zlib.crc32(raw[:16]) and (
        first == FIRST_NONE or first < block_size - BLOCK_HEADER)
    # state: upper half all ones while live; lower half zero: sealed (replay trusts its records'
    # headers); all zero: obsolete
    live = valid and state >> 16 == 0xFFFF
    return {"block": block, "seq": seq, "rec_seq_base": rec_seq_base, "first": first,
            "valid": valid, "live": live, "sealed": live and state & 0xFFFF == 0}


def find_log(headers):
    """The chain of live blocks with consecutive sequence numbers ending in the highest one."""
    live = [h for h in headers if h["live"]]
    if not live:
        return []
    top = max(live, key=lambda h: h["seq"])
    chain = [top]
    n = len(headers)
    while len(chain) < n:
        prev = headers[(chain[0]["block"] - 1) % n]
        if not prev["live"] or prev["seq"] != chain[0]["seq"] - 1:
            break
        chain.insert(0, prev)
    return chain


def records(image, chain, block_size):
    """Valid records in log order, as (position, type, seq, payload), the torn bytes, the
    position after the last valid record, and the positions where torn bytes were found.

    Positions count data bytes from the tail block's data area; the data areas of the log's
    blocks, in ring order, form one stream in which records may cross block boundaries."""
    data_size = block_size - BLOCK_HEADER
    stream = b"".join(image[h["block"] * block_size + BLOCK_HEADER:(h["block"] + 1) * block_size]
                      for h in chain)
    starts = [(i * data_size + h["first"]) for i, h in enumerate(chain) if h["first"] != FIRST_NONE]
    found, torn, torn_at = [], 0, []
    if not starts:
        return found, torn, 0, torn_at
    pos = starts[0]
    while pos + RECORD_HEADER <= len(stream):
        head = stream[pos:pos + RECORD_HEADER]
        if head == b"\xff" * RECORD_HEADER:
            valid = False
        else:
            magic, kind, version, length, seq, crc = struct.unpack("<HBBIII", head)
            end = pos + RECORD_HEADER + length
            valid = (magic == RECORD_MAGIC and version == RECORD_VERSION and PAD <= kind <= PROPS_MOVE_PUT
                     and end <= len(stream)
                     and zlib.crc32(stream[pos + RECORD_HEADER:end], zlib.crc32(head[:12])) == crc)
        if valid:
            found.append((pos, kind, seq, stream[pos + RECORD_HEADER:end]))
            pos = end
            continue
        # blank or torn: nothing more starts in this block; go on at the next record start
        later = [p for p in starts if p // data_size > pos // data_size]
        stop = later[0] if later else len(stream)
        dropped = sum(1 for b in stream[pos:stop] if b != 0xFF)
        if dropped:
            torn_at.append(pos)
        torn += dropped
        if not later:
            break
        pos = stop
    return found, torn, found[-1][0] + RECORD_HEADER + len(found[-1][3]) if found else 0, torn_at


def parse_props(payload, at, end):
    """A property list (key u8, length u16, value, repeated) in payload[at:end]: the live
    properties by key and the dead ones' values in their order."""
    props, dead = {}, []
    while at < end:
        prop, length = struct.unpack_from("<BH", payload, at)
        value = payload[at + 3:at + 3 + length]
        if at + 3 + length > end:
            raise ValueError("property list length")
        if prop == DEAD_PROP:
            dead.append(value)
        else:
            props[prop] = value
        at += 3 + length
    return props, dead


def parse_collection(payload):
    coll_id, owner_len = struct.unpack_from("<IB", payload)
    at = 5
    owner = payload[at:at + owner_len]
    at += owner_len
    path_len = payload[at]
    path = payload[at + 1:at + 1 + path_len]
    at += 1 + path_len
    nprops = payload[at]
    props, dead = parse_props(payload, at + 1, len(payload))
    if len(props) + len(dead) != nprops or len(owner) != owner_len or len(path) != path_len:
        raise ValueError("collection record length")
    return coll_id, owner.decode(errors="replace"), path.decode(errors="replace"), props, dead


def read_image(image, block_size=4096):
    """The store an image holds: {"collections": {path: {...}}, "users": [...], "log": {...},
    "problems": [...]}. Objects are {name: body bytes}."""
    if block_size < 4 * BLOCK_HEADER or len(image) % block_size:
        raise ImageError(f"image of {len(image)} bytes is not a whole number of {block_size}-byte blocks")
    headers = [block_header(image, b, block_size) for b in range(len(image) // block_size)]
    problems = []
    chain = find_log(headers)
    seqs = [h["seq"] for h in headers if h["live"]]
    if len(seqs) != len(set(seqs)):
        problems.append("two live blocks with one sequence number")
    found, torn, end, torn_at = records(image, chain, block_size)
    data_size = block_size - BLOCK_HEADER
    for pos in torn_at:  # a sealed block holds only complete records: the firmware trusts them
        if chain[pos // data_size]["sealed"]:
            problems.append(f"torn bytes in sealed block {chain[pos // data_size]['block']} (log byte {pos})")
    end_address = (chain[end // data_size]["block"] * block_size + BLOCK_HEADER + end % data_size
                   if chain and end < len(chain) * data_size else None)

    users, collections, deleted, floors, objects = {}, {}, set(), {}, {}
    for pos, kind, seq, payload in found:  # pass 1: users, collections, floors
        try:
            if kind == USER:
                name_len = payload[0]
                if name_len == 0 or 2 + name_len > len(payload) or 2 + name_len + payload[1 + name_len] != len(payload):
                    raise ValueError("user record length")
                name = payload[1:1 + name_len].decode(errors="replace")
                users[name] = max(users.get(name, 0), seq)
            elif kind == COLL:
                coll_id, owner, path, props, dead = parse_collection(payload)
                if coll_id not in deleted and seq >= collections.get(coll_id, {}).get("seq", 0):
                    collections[coll_id] = {"seq": seq, "owner": owner, "path": path, "props": props,
                                            "dead_props": dead}
            elif kind == COLL_DEL:
                (coll_id,) = struct.unpack("<I", payload)
                collections.pop(coll_id, None)
                deleted.add(coll_id)
            elif kind == FLOOR:
                coll_id, floor = struct.unpack("<II", payload)
                floors[coll_id] = max(floors.get(coll_id, 0), floor)
        except (struct.error, ValueError, IndexError):
            problems.append(f"malformed {TYPE_NAMES[kind]} record (seq {seq}) at log byte {pos}")
    for i, (pos, kind, seq, payload) in enumerate(found):  # pass 2: objects, the higher sync wins
        if kind in (MOVE_PUT, PROPS_MOVE_PUT):  # a MOVE's put counts only when its MOVE_DEL is next
            nxt = found[i + 1] if i + 1 < len(found) else None
            if not nxt or nxt[1] != MOVE_DEL or nxt[0] != pos + RECORD_HEADER + len(payload):
                continue
            kind = PUT if kind == MOVE_PUT else PROPS_PUT
        elif kind == MOVE_DEL:
            kind = DEL
        if kind not in (PUT, DEL, PROPS_PUT):
            continue
        try:
            coll_id, sync, name_len = struct.unpack_from("<IIB", payload)
        except struct.error:
            problems.append(f"malformed {TYPE_NAMES[kind]} record (seq {seq}) at log byte {pos}")
            continue
        if name_len == 0 or 9 + name_len > len(payload) or (kind == DEL and 9 + name_len != len(payload)):
            problems.append(f"malformed {TYPE_NAMES[kind]} record (seq {seq}) at log byte {pos}")
            continue
        if coll_id not in collections:
            continue
        name = payload[9:9 + name_len].decode(errors="replace")
        key = (coll_id, name)
        if key in objects and sync < objects[key]["sync"]:
            continue
        etag, body_at, dead = seq, 9 + name_len, []
        if kind == PROPS_PUT:  # the ETag kept across PROPPATCHes, the property list, the body
            try:
                etag, props_len = struct.unpack_from("<IH", payload, body_at)
                props, dead = parse_props(payload, body_at + 6, body_at + 6 + props_len)
                if props or body_at + 6 + props_len > len(payload):
                    raise ValueError("object property list")
            except (struct.error, ValueError):
                problems.append(f"malformed {TYPE_NAMES[kind]} record (seq {seq}) at log byte {pos}")
                continue
            body_at += 6 + props_len
        objects[key] = {"sync": sync, "etag": etag, "deleted": kind == DEL, "body": payload[body_at:],
                        "dead_props": dead}

    paths = {}
    for coll_id, c in sorted(collections.items()):
        if c["path"] in paths:
            problems.append(f"two collections on {c['path']}")
        floor = floors.get(coll_id, 0)
        members = {name: o for (cid, name), o in objects.items() if cid == coll_id}
        paths[c["path"]] = {
            "id": coll_id, "owner": c["owner"], "history_floor": floor,
            "sync": max([floor] + [o["sync"] for o in members.values()]),
            "objects": {name: o["body"] for name, o in sorted(members.items()) if not o["deleted"]},
            "etags": {name: o["etag"] for name, o in sorted(members.items()) if not o["deleted"]},
            "tombstones": sorted(name for name, o in members.items() if o["deleted"] and o["sync"] > floor),
            "dead_props": c["dead_props"],
            "object_dead_props": {name: o["dead_props"] for name, o in sorted(members.items())
                                  if not o["deleted"] and o["dead_props"]},
        }
    return {
        "collections": paths, "users": sorted(users),
        "log": {"blocks": len(chain), "block_numbers": [h["block"] for h in chain],
                "sealed_blocks": sum(h["sealed"] for h in chain), "records": len(found),
                "torn_bytes": torn, "end_address": end_address,
                "block_seq": [chain[0]["seq"], chain[-1]["seq"]] if chain else None},
        "problems": problems,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("image", help="the flash image file (e.g. a simulator's flash.bin)")
    parser.add_argument("--block-size", type=int, default=4096,
                        help="erase block size in bytes (default 4096, the sim flash's sectors)")
    parser.add_argument("--json", action="store_true", help="print everything as JSON (bodies as lengths)")
    args = parser.parse_args(argv)
    try:
        with open(args.image, "rb") as f:
            store = read_image(f.read(), args.block_size)
    except (OSError, ImageError) as e:
        print(f"store_image: {e}", file=sys.stderr)
        return 2
    if args.json:
        for c in store["collections"].values():
            c["objects"] = {name: len(body) for name, body in c["objects"].items()}
            c["dead_props"] = len(c["dead_props"])
            c["object_dead_props"] = {name: len(d) for name, d in c["object_dead_props"].items()}
        print(json.dumps(store, indent=1, sort_keys=True))
    else:
        log = store["log"]
        print(f"log: {log['blocks']} blocks ({log['sealed_blocks']} sealed), {log['records']} records, "
              f"{log['torn_bytes']} torn bytes")
        print(f"users: {', '.join(store['users']) or '-'}")
        for path, c in store["collections"].items():
            print(f"{path} (owner {c['owner']}, sync {c['sync']}, floor {c['history_floor']}): "
                  f"{len(c['objects'])} objects, {len(c['tombstones'])} tombstones, "
                  f"{len(c['dead_props']) + sum(map(len, c['object_dead_props'].values()))} dead properties")
        for problem in store["problems"]:
            print(f"problem: {problem}")
        print("store image: " + ("ok" if not store["problems"] else f"{len(store['problems'])} problems"))
    return 1 if store["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
