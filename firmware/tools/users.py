#!/usr/bin/env python3
"""Manage firmware/users.conf, the user table provisioned into the store at boot.

Each line is USER("name", "salt", "hash"): a random 16-byte salt and
SHA-256(salt || password), both in hex, so no password is ever in the image.
The firmware (firmware/app/http/auth.c) includes the file and, at boot, adds or
updates every listed user in the store.

  users.py add NAME [--password PW]   add or replace a user (asks when no --password)
  users.py remove NAME                 remove a user from the file
  users.py list                        list the user names
"""
import argparse
import getpass
import hashlib
import os
import re
import sys

DEFAULT_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "users.conf")
LINE = re.compile(r'^USER\("([^"]+)", "([0-9a-f]{32})", "([0-9a-f]{64})"\)$')
NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
HEADER = ("/* LiteDAV users, provisioned into the store at boot (firmware/app/http/auth.c).\n"
          " * Written by firmware/tools/users.py: USER(name, salt, SHA-256(salt || password)).\n"
          " * The demo user is demo / demo. */\n")


def user_line(name, password, salt=None):
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.sha256(salt + password.encode("utf-8")).hexdigest()
    return f'USER("{name}", "{salt.hex()}", "{digest}")'


def read_users(path):
    users = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = LINE.match(line.strip())
                if m:
                    users.append((m.group(1), line.strip()))
    return users


def write_users(path, users):
    with open(path, "w", encoding="utf-8") as f:
        f.write(HEADER)
        for _, line in users:
            f.write(line + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default=DEFAULT_FILE, help="users file (default: firmware/users.conf)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    add = sub.add_parser("add", help="add or replace a user")
    add.add_argument("name")
    add.add_argument("--password", help="the password (asked for when absent)")
    rm = sub.add_parser("remove", help="remove a user")
    rm.add_argument("name")
    sub.add_parser("list", help="list user names")
    args = ap.parse_args(argv)

    users = read_users(args.file)
    if args.cmd == "list":
        for name, _ in users:
            print(name)
        return 0
    if not NAME.match(args.name):
        print(f"users.py: a name is 1-64 of A-Z a-z 0-9 . _ -, not {args.name!r}", file=sys.stderr)
        return 2
    users = [(n, line) for n, line in users if n != args.name]
    if args.cmd == "add":
        password = args.password if args.password is not None else getpass.getpass(f"password for {args.name}: ")
        if not password or ":" in args.name:
            print("users.py: empty password", file=sys.stderr)
            return 2
        users.append((args.name, user_line(args.name, password)))
    write_users(args.file, users)
    return 0


if __name__ == "__main__":
    sys.exit(main())
