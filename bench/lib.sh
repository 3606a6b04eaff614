# Helpers shared by the benchmark scripts (sourced; `tag` names the script in messages).

die() {
  echo "$tag: $*" >&2
  exit 1
}

# Key pairs for a receiver and a sender, made by `longhaul keygen` in the two LONGHAUL_HOMEs
# given, with the sender's public key authorized on the receiver.
make_keys() { # BIN RX_HOME TX_HOME
  local h
  for h in "$2" "$3"; do
    LONGHAUL_HOME="$h" "$1" keygen >/dev/null 2>&1 || die "longhaul keygen failed"
  done
  cp "$3/id_x25519.pub" "$2/authorized_keys"
}

# The script's leading comment block, as its help.
usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

# Start `BIN emu pair EMU_ARGS…` for as long as the script runs (its output in SCRATCH) and wait
# until both hosts are up; sets emu_pid, addr_a (host A) and addr_b (host B). The caller stops
# it with `stop_emu` (in its cleanup).
start_emu() { # BIN SCRATCH EMU_ARGS…
  local emu_bin="$1" emu_dir="$2" ready=0 addrs _
  shift 2
  "$emu_bin" emu pair "$@" --duration 86400s >"$emu_dir/emu.out" 2>"$emu_dir/emu.err" &
  emu_pid=$!
  for _ in $(seq 1 300); do
    kill -0 "$emu_pid" 2>/dev/null || die "the emulator exited: $(cat "$emu_dir/emu.err")"
    if addrs="$("$emu_bin" emu exec --id "$emu_pid" a -- sh -c 'echo $LONGHAUL_EMU_A $LONGHAUL_EMU_B' 2>/dev/null)"; then
      ready=1
      break
    fi
    sleep 0.1
  done
  [ $ready -eq 1 ] || die "the emulator was not ready after 30 s: $(cat "$emu_dir/emu.err")"
  sleep 0.5 # the state file is written before the devices
  read -r addr_a addr_b <<<"$addrs"
}

# Stop the emulator start_emu started, if any (it removes its namespaces on SIGTERM).
stop_emu() {
  if [ -n "${emu_pid:-}" ]; then
    kill -TERM "$emu_pid" 2>/dev/null || true
    wait "$emu_pid" 2>/dev/null || true
    emu_pid=""
  fi
}

sshd_config() { # SSHDIR LISTEN…: a throwaway sshd's config, host and client keys in SSHDIR
  local dir=$1
  shift
  printf '%s\n' "$@"
  cat <<CFG
HostKey $dir/host
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
Subsystem sftp internal-sftp
CFG
}
