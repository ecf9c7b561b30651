import pytest

def add(n):
    return sum(range(n))

def sort(n):
    return sorted(range(n, 0, -1))

@pytest.mark.benchmark(group="sum")
@pytest.mark.parametrize("n", [1000, 10000])
def test_sum(benchmark, n):
    benchmark(add, n)

@pytest.mark.benchmark(group="sort")
@pytest.mark.parametrize("n", [1000, 10000])
@pytest.mark.parametrize("kind", ["reversed"])
def test_sort(benchmark, n, kind):
    benchmark(sort, n)
