#!/bin/sh
# Builds the oracle's base initramfs from the installed Debian packages:
# busybox-static, fio with the libraries ldd names, the block modules the
# oracle loads (decompressed: busybox's insmod reads plain .ko files) and
# /init (oracle-init.sh). Usage: build-initramfs.sh KERNEL_RELEASE OUT.cpio INIT
# Beside OUT.cpio it leaves the kernel decompressed as OUT.vmlinux, an ELF file QEMU boots through
# its PVH entry point: no bzImage decompression under TCG (about 4 s of every boot on a 2-core
# machine). A kernel that is not xz-compressed gets none, and the oracle boots /boot/vmlinuz.
# Prints nothing on success; one line naming what is missing otherwise (exit 1).
set -eu
release=$1 out=$2 init=$3
moddir=/lib/modules/$release
[ -d "$moddir" ] || { echo "no modules for kernel $release in $moddir (Debian package linux-image-amd64)"; exit 1; }
bb=$(command -v busybox || true)
[ -n "$bb" ] && "$bb" --list >/dev/null 2>&1 || { echo "busybox is missing (Debian package busybox-static)"; exit 1; }
ldd "$bb" >/dev/null 2>&1 && { echo "busybox is not static (Debian package busybox-static)"; exit 1; }
fio=$(command -v fio || true)
[ -n "$fio" ] || { echo "fio is missing (Debian package fio)"; exit 1; }
command -v cpio >/dev/null || { echo "cpio is missing (Debian package cpio)"; exit 1; }

root=$(mktemp -d "${out}.root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/sbin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/modules" "$root/job"
cp "$bb" "$root/bin/busybox"
cp "$fio" "$root/bin/fio"
cp "$init" "$root/init"
chmod 755 "$root/init"
# fio's libraries where the loader looks for them (Debian 12 is merged-/usr: /lib -> usr/lib).
ldd "$fio" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
# The block modules and what they depend on, in load order (modules.dep lists dependencies after the module).
for m in virtio_blk virtio_pci null_blk; do
    line=$(grep -E "/$m\.ko(\.xz)?:" "$moddir/modules.dep" || true)
    [ -n "$line" ] || { echo "module $m is not in $moddir/modules.dep"; exit 1; }
    deps=$(echo "$line" | cut -d: -f2)
    for d in $(echo "$deps" | tr ' ' '\n' | tac) $(echo "$line" | cut -d: -f1); do
        name=$(basename "$d" | sed 's/\.xz$//')
        grep -qx "$name" "$root/modules/order" 2>/dev/null && continue
        case "$d" in
            *.xz) xz -dc "$moddir/$d" > "$root/modules/$name" ;;
            *) cp "$moddir/$d" "$root/modules/$name" ;;
        esac
        echo "$name" >> "$root/modules/order"
    done
done
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) > "$out.tmp"
# The xz stream inside the bzImage is the kernel itself (Debian 12 compresses with xz); it ends where
# the setup code's trailer begins, so only the first stream is decoded.
image=/boot/vmlinuz-$release
at=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$image" 2>/dev/null | head -n 1 | cut -d: -f1)
if [ -n "$at" ] && command -v xz >/dev/null; then
    kernel=$(mktemp "${out}.vmlinux.XXXXXX")
    if tail -c +"$((at + 1))" "$image" | xz -dc --single-stream > "$kernel" 2>/dev/null \
        && [ "$(head -c 4 "$kernel" | od -An -c | tr -d ' ')" = '177ELF' ]; then
        mv "$kernel" "${out%.cpio}.vmlinux"
    else
        rm -f "$kernel"
    fi
fi
mv "$out.tmp" "$out"
