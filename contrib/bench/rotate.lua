-- wrk script (contrib/bench/bench-cluster.sh): each request a render no cache holds yet, over
-- several armatures: PREFIX .. k .. SUFFIX with k in 0..COUNT-1, and a frame that advances
-- after every COUNT requests, so the result cache (off there anyway) and ETags never repeat.
init = function(args)
  prefix, suffix, count = args[1], args[2], tonumber(args[3])
  n = 0
end
request = function()
  local k = n % count
  local frame = math.floor(n / count) % 1000
  n = n + 1
  return wrk.format(nil, prefix .. k .. suffix .. frame)
end
