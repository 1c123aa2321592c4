#!/bin/sh
# Proves the ABI check can fail: abi_check.c must compile as it is and must
# be refused with GR_ABI_SELFTEST (one deliberately wrong prototype).
# usage: selftest.sh CC FILE FLAGS...
cc=$1 file=$2
shift 2
if ! "$cc" "$@" "$file"; then
  echo "abi_check.c does not compile against the installed headers"
  exit 1
fi
if out=$("$cc" "$@" -DGR_ABI_SELFTEST "$file" 2>&1); then
  echo "abi_check.c accepted a wrong prototype: the check cannot fail"
  exit 1
fi
echo "$out" | grep -q "incompatible" || { echo "unexpected failure: $out"; exit 1; }
echo "ABI check refuses a wrong prototype:"
echo "$out" | grep -m1 "incompatible"
