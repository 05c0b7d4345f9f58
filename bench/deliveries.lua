-- wrk script for bench/webhooks.ts: POSTs the deliveries of the file given after `--` (one
-- `signature<TAB>body` a line, bench/webhook-deliveries.ts) in turn, each formatted once at start
-- so that wrk's own cost per request stays what it is for a fixed request. Past the end of the
-- file it starts again: those are duplicates, which the bench reports.
local requests = {}
local i = 0

function init(args)
  for line in io.lines(args[1]) do
    local tab = line:find("\t", 1, true)
    requests[#requests + 1] = wrk.format("POST", wrk.path, {
      ["content-type"] = "application/json",
      ["x-hub-signature-256"] = line:sub(1, tab - 1),
    }, line:sub(tab + 1))
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end
