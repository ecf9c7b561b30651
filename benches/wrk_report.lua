-- wrk's summary as one line (p50, p99, max, rate, requests, errors): the load tests'
-- figures (benches/load_web.sh, benches/year.sh; BENCHMARKS.md).
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout + summary.errors.status
  io.write(string.format("p50 %.2f ms  p99 %.2f ms  max %.2f ms  %.0f req/s  %d requests  %d errors\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    summary.requests / (summary.duration / 1e6), summary.requests, errors))
end
