# Sourced by scripts/build-controlplane, build-helm and build-actionlint: each builds the tools that a
# pinned Go module of devstack/ names into .tools/bin/ with the machine's Go, through the Go module proxy,
# and skips the build while the stamp .tools/bin/<name>.pin matches a hash of the pin (the module's
# go.mod and go.sum, the calling script, this file and the Go version).
# shellcheck shell=bash

BIN=$PWD/.tools/bin
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

# require_go WHO: exit 2 with a line naming WHO when there is no Go toolchain.
require_go() {
    if [ ! -x "$GO" ]; then
        echo "$1: no Go toolchain (looked for go on PATH and /usr/local/go/bin/go); install Go 1.26+" >&2
        exit 2
    fi
}

# module_version MODULE PATH: the version that MODULE/go.mod requires of the module PATH.
module_version() {
    awk -v path="$2" '$1 == path && $2 ~ /^v/ {print $2; exit}' "$1/go.mod"
}

# pin_of MODULE SCRIPT: the hash the stamp holds.
pin_of() {
    { cat "$1/go.mod" "$1/go.sum" "$2" "${BASH_SOURCE[0]}"; "$GO" version; } | sha256sum | cut -d' ' -f1
}

# pin_built STAMP PIN BINARY...: the stamp holds PIN and every binary is there.
pin_built() {
    local stamp=$1 pin=$2 binary
    shift 2
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pin" ] || return 1
    for binary in "$@"; do [ -x "$BIN/$binary" ] || return 1; done
}

# go_build NAME PACKAGE LDFLAGS: a static binary into .tools/bin/NAME, run from the module's directory;
# the module proxy and go.sum decide what is built, never the checkout (no VCS stamp).
go_build() {
    CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
        "$GO" build -trimpath -ldflags "$3" -o "$BIN/$1.partial" "$2"
    mv "$BIN/$1.partial" "$BIN/$1"
}
