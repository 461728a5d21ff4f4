# ellery watch bench (README, Online checking): makes the first :ok read of a
# non-fence key at or after op line `at` return 1, a value its key held long
# before (a stale read). usage: ellery gen ... | awk -v at=19000000 -f scripts/inject-stale-read.awk | ellery watch ...
NR >= at && !done && /:type :ok/ && match($0, /\[:r [0-9]+ [0-9]+\]/) {
  m = substr($0, RSTART, RLENGTH); split(m, p, " ");
  $0 = substr($0, 1, RSTART - 1) "[:r " p[2] " 1]" substr($0, RSTART + RLENGTH);
  done = 1; print "injected at line " NR ": " $0 > "/dev/stderr"
}
{ print }
