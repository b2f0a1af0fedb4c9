#!/bin/sh
# The guest is built, kept and booted only from a folder no one else can change, and nothing is
# ever written through a name planted there. Usage: cache.sh CLI ORACLE_DIR SHARED_CACHE
cli=$1 dir=$2 shared=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# refused CACHE TEXT: the run stops at once, exit 1, one line that contains TEXT, nothing made.
refused() {
    out=$("$cli" oracle --preset virtio-2s-1q --cache "$1" 2>&1)
    rc=$?
    echo "$out"
    [ "$rc" -eq 1 ] || fail "exit $rc, not 1, with --cache $1"
    [ "$(echo "$out" | wc -l)" -eq 1 ] || fail "more than one line"
    echo "$out" | grep -qF "$2" || fail "no '$2'"
}

# A folder others can write, and one below a folder others can write (not sticky).
mkdir -m 0777 "$work/open"
refused "$work/open" "the folder '$work/open' can be written by others (mode 0777)"
[ -z "$(ls -A "$work/open")" ] || fail "something was made in $work/open"
mkdir -m 0777 "$work/shared"
refused "$work/shared/cache" "the folder '$work/shared' can be written by others (mode 0777)"
# Someone else's folder: nobody's when root runs it, root's otherwise.
if [ "$(id -u)" -eq 0 ]; then
    mkdir -m 0755 "$work/nobodys"
    chown 65534 "$work/nobodys"
    refused "$work/nobodys" "the folder '$work/nobodys' belongs to nobody (uid 65534), not to root (uid 0)"
else
    refused / "the folder '/' belongs to root (uid 0), not to"
fi
# No cache folder given and no HOME: no fallback under /tmp.
out=$(env -u HOME -u XDG_CACHE_HOME -u BLKMQLAB_ORACLE_CACHE "$cli" oracle --preset virtio-2s-1q 2>&1)
rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -qF "no cache folder: HOME is not set" || fail "HOME unset: exit $rc: $out"

# Every name the oracle keeps in its cache (learnt from a run on the shared one), and the same with
# .tmp, planted as links to a victim in a private folder: the run builds its guest anyway and the
# victim is untouched.
"$cli" oracle --preset virtio-2s-1q --cache "$shared" >/dev/null || fail "the oracle does not run on $shared"
mkdir -m 0700 "$work/private"
echo "victim" > "$work/victim"
names=$(ls "$shared" | grep -v '^lock$') # a link named lock is refused (O_NOFOLLOW), not written through
[ -n "$names" ] || fail "nothing in $shared"
for name in $names; do
    ln -s "$work/victim" "$work/private/$name"
    ln -s "$work/victim" "$work/private/$name.tmp"
done
"$cli" oracle --preset virtio-2s-1q --cache "$work/private" >/dev/null || fail "no run in a private folder with links"
[ "$(cat "$work/victim")" = "victim" ] || fail "the victim was written through a link"
records=$(cd "$shared" && ls *.sha256)
[ -n "$records" ] || fail "no record of the guest's hashes in $shared"
for record in $records; do
    for name in "$record" "${record%.sha256}.cpio"; do
        [ -f "$work/private/$name" ] && [ ! -L "$work/private/$name" ] || fail "$name is not the guest built"
    done
done
# A guest changed after the lab built it is not booted.
cpio=$(ls "$work/private"/base-*.cpio | head -n 1)
printf x >> "$cpio"
out=$("$cli" oracle --preset virtio-2s-1q --cache "$work/private" 2>&1)
rc=$?
[ "$rc" -eq 1 ] && echo "$out" | grep -qF "'$cpio' is not the file the lab built" || fail "a changed guest: exit $rc: $out"
echo "ok: refused where others could change the guest, nothing written through a planted link"
