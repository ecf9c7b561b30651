#include <benchmark/benchmark.h>
#include <numeric>
#include <vector>
#include <algorithm>

static void BM_Sum(benchmark::State& state) {
  std::vector<float> v(state.range(0), 1.0f);
  for (auto _ : state) {
    float s = 0;
    for (int r = 0; r < WORK; ++r) s += std::accumulate(v.begin(), v.end(), 0.0f);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0) * sizeof(float));
}
BENCHMARK(BM_Sum)->Arg(4096)->Arg(65536);

static void BM_Sort(benchmark::State& state) {
  std::vector<int> v(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < v.size(); ++i) v[i] = int(v.size() - i);
    state.ResumeTiming();
    std::sort(v.begin(), v.end());
    benchmark::DoNotOptimize(v.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Sort)->RangeMultiplier(8)->Range(1<<10, 1<<13);

BENCHMARK_MAIN();
