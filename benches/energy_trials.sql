-- The rows of sample-data/h100-energy/trials.csv from a warehouse the energy experiments
-- stored: perfdb --warehouse OUT/wh sql --format csv "$(cat benches/energy_trials.sql)"
SELECT regexp_replace(r.label, '-(base|head)$', '') AS experiment,
  regexp_extract(r.tags, '"arm":"([^"]*)"', 1) AS arm,
  regexp_extract(r.tags, '"started_at":"([^"]*)"', 1) AS started_at,
  regexp_extract(r.tags, '"block":"([^"]*)"', 1) AS block,
  regexp_extract(r.tags, '"block_position":"([^"]*)"', 1) AS block_position,
  regexp_extract(r.tags, '"command":"([^"]*)"', 1) AS command,
  regexp_extract(r.tags, '"duration_s":"([^"]*)"', 1) AS duration_s,
  regexp_extract(r.tags, '"gpu_energy_j":"([^"]*)"', 1) AS energy_j,
  regexp_extract(r.tags, '"gpu_power_integrated_j":"([^"]*)"', 1) AS power_integrated_j,
  regexp_extract(r.tags, '"gpu_power_samples":"([^"]*)"', 1) AS power_samples,
  printf('%.3f', m.value) AS add_us,
  regexp_extract(r.tags, '"gpu_clock_mhz_after":"([^"]*)"', 1) AS gpu_clock_mhz_after,
  regexp_extract(r.tags, '"gpu_temperature_c_after":"([^"]*)"', 1) AS gpu_temperature_c_after,
  regexp_extract(r.tags, '"gpu_throttle_after":"([^"]*)"', 1) AS gpu_throttle_after
FROM runs r JOIN measurements m ON m.run_id = r.run_id
WHERE m.table_name <> 'gpu' AND regexp_extract(r.tags, '"block":"([^"]*)"', 1) <> ''
ORDER BY CAST(regexp_extract(r.label, 'aa([0-9]+)', 1) AS INTEGER), started_at
