#!/usr/bin/env bash
# The window as a desktop shows it: under a window manager (openbox) on a 1280x800 screen, a first
# start (no saved settings) puts the whole window, title bar and status bar, on the screen.
#   window-fits-the-screen.sh BLKMQLAB
set -euo pipefail
gui=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/inside.sh" <<'INSIDE'
set -euo pipefail
gui=$1 work=$2
export HOME=$work XDG_RUNTIME_DIR=$work
unset XDG_CONFIG_HOME
openbox --sm-disable >/dev/null 2>&1 &
sleep 1
"$gui" --preset default >"$work/gui.log" 2>&1 &
app=$!
trap 'kill $app 2>/dev/null || true' EXIT
# The main window: the mapped top-level whose title names the scenario (xwininfo: ID "TITLE": ... WxH+X+Y).
for _ in $(seq 1 120); do
    line=$(xwininfo -root -tree | grep -F '"BlkMQ Lab — default' || true)
    [ -n "$line" ] && break
    sleep 0.25
done
[ -n "$line" ] || { echo "no window titled 'BlkMQ Lab — default' appeared"; cat "$work/gui.log"; exit 1; }
sleep 2 # the window manager's moves and the maximizing come after the map
id=$(xwininfo -root -tree | grep -F '"BlkMQ Lab — default' | awk '{print $1}')
read -r y h < <(xwininfo -id "$id" | awk '/Absolute upper-left Y/ {y=$NF} /Height:/ {h=$NF} END {print y, h}')
read -r H < <(xwininfo -root | awk '/Height:/ {print $NF}')
echo "window: y = $y, height = $h; screen height $H"
[ "$y" -ge 1 ] || { echo "no title bar above the window: is a window manager running?"; exit 1; }
[ $((y + h)) -le "$H" ] || { echo "the window's bottom ($((y + h))) is below the screen's ($H): its status bar cannot be seen"; exit 1; }
INSIDE
xvfb-run -a -s "-screen 0 1280x800x24" bash "$work/inside.sh" "$gui" "$work"
