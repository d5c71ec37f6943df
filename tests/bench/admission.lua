-- wrk script for tests/bench/run.sh: POSTs real AdmissionReview bodies over
-- keep-alive connections, round-robin over the (route, file) pairs given
-- after `--`:
--
--   wrk ... -s admission.lua https://127.0.0.1:PORT -- [delay=MS] [close] ROUTE FILE [ROUTE FILE]...
--
-- delay=MS makes every connection wait MS milliseconds before each request
-- (a paced, moderate load instead of a closed loop at full speed).
-- close sends "Connection: close": every request on a new TLS connection
-- (wrk reconnects when the server closes), which measures handshakes.
-- done() prints one machine-readable line that run.sh reads:
--   BENCH requests=N duration_us=N rps=N connect=N read=N write=N status=N
--         timeout=N p50_us=N p75_us=N p90_us=N p99_us=N p999_us=N max_us=N

local reqs = {}
local n = 0
local i = 0

local function slurp(path)
	local f = assert(io.open(path, "rb"), "cannot read " .. path)
	local s = f:read("*a")
	f:close()
	return s
end

function init(args)
	local k = 1
	if args[k] and args[k]:match("^delay=") then
		local ms = tonumber(args[k]:sub(7))
		delay = function() return ms end
		k = k + 1
	end
	local close = false
	if args[k] == "close" then
		close = true
		k = k + 1
	end
	while args[k] do
		local route, file = args[k], args[k + 1]
		assert(file, "want ROUTE FILE pairs after --")
		local body = slurp(file)
		n = n + 1
		local headers = {
			["Content-Type"] = "application/json",
			["Accept"] = "application/json",
		}
		if close then
			headers["Connection"] = "close"
		end
		reqs[n] = wrk.format("POST", route, headers, body)
		k = k + 2
	end
	assert(n > 0, "want at least one ROUTE FILE pair after --")
end

function request()
	i = i % n + 1
	return reqs[i]
end

function done(summary, latency, requests)
	local e = summary.errors
	local us = summary.duration
	io.write(string.format(
		"BENCH requests=%d duration_us=%d rps=%.0f connect=%d read=%d write=%d status=%d " ..
		"timeout=%d p50_us=%d p75_us=%d p90_us=%d p99_us=%d p999_us=%d max_us=%d\n",
		summary.requests, us, summary.requests / (us / 1e6), e.connect, e.read, e.write,
		e.status, e.timeout, latency:percentile(50), latency:percentile(75),
		latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
		latency.max))
end
