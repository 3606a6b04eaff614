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
