-- wrk script (contrib/bench/bench-daemon.sh): DEPTH requests pipelined per write on each
-- connection, as bench-load keeps DEPTH in flight on the binary protocol.
init = function(args)
  local depth = tonumber(args[1]) or 16
  local r = {}
  for i = 1, depth do r[i] = wrk.format(nil, wrk.path) end
  req = table.concat(r)
end
request = function() return req end
