"""Telemetry sources (bench/measure/telemetry, usage, machine) with fake sources:
one present, one missing, one that fails partway. Never a failed benchmark."""

import ctypes
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from bench.measure import machine, usage
from bench.measure.telemetry import Unavailable, cpu, guarded, nvml, rapl, snapshot


class FakeNVML:
    """A stand-in for pynvml: one RTX card, a shared process, an energy counter in mJ.

    `broken` names functions that raise (NVMLError_NotSupported on consumer cards);
    `energy_fails_after` makes the energy counter die after that many reads."""

    class NVMLError(Exception):
        pass

    def __init__(self, broken=(), energy_fails_after=None, init_error=None):
        self.broken, self.init_error = set(broken), init_error
        self.energy_mj, self.energy_reads, self.energy_fails_after = 1_000_000, 0, energy_fails_after
        self.shutdowns = 0

    def _check(self, name):
        if name in self.broken:
            raise self.NVMLError("Not Supported")

    def nvmlInit(self):
        if self.init_error:
            raise self.NVMLError(self.init_error)

    def nvmlShutdown(self):
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self):
        return "570.86.10"

    def nvmlSystemGetCudaDriverVersion(self):
        return 12080

    def nvmlDeviceGetCount(self):
        return 1

    def nvmlDeviceGetHandleByIndex(self, i):
        return ("handle", i)

    def nvmlDeviceGetName(self, h):
        return b"NVIDIA GeForce RTX 5070 Ti"

    def nvmlDeviceGetClockInfo(self, h, which):
        return {nvml.CLOCK_SM: 2452, nvml.CLOCK_MEM: 14001}[which]

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 250000

    def nvmlDeviceGetPowerUsage(self, h):
        self._check("nvmlDeviceGetPowerUsage")
        return 61234

    def nvmlDeviceGetTemperature(self, h, sensor):
        return 47

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):
        return 0x1 | 0x4

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(used=1_500_000_000, total=16_000_000_000, free=14_500_000_000)

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        self._check("nvmlDeviceGetComputeRunningProcesses")
        return [SimpleNamespace(pid=999_999_1, usedGpuMemory=1_200_000_000)]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h):
        return [SimpleNamespace(pid=999_999_2, usedGpuMemory=None)]

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        self.energy_reads += 1
        if self.energy_fails_after is not None and self.energy_reads > self.energy_fails_after:
            raise self.NVMLError("GPU is lost")
        self.energy_mj += 2500  # 2.5 J between reads
        return self.energy_mj


# -- NVML --------------------------------------------------------------------

def test_nvml_present_reads_every_field():
    s = nvml.state(FakeNVML())
    assert s["driver"] == "570.86.10" and s["cuda_driver"] == "12.8"
    (d,) = s["devices"]
    assert d["name"] == "NVIDIA GeForce RTX 5070 Ti"
    assert (d["sm_clock_mhz"], d["memory_clock_mhz"]) == (2452, 14001)
    assert (d["power_limit_w"], d["power_draw_w"], d["temperature_c"]) == (250.0, 61.2, 47)
    assert d["throttle_reasons"] == ["gpu_idle", "sw_power_cap"]
    assert d["memory"] == {"used_bytes": 1_500_000_000, "total_bytes": 16_000_000_000}
    assert [(p["pid"], p["used_bytes"]) for p in d["processes"]] == [(9999991, 1_200_000_000), (9999992, None)]
    assert "unavailable" not in d


def test_nvml_missing_is_unavailable_with_the_reason():
    fake = FakeNVML(init_error="NVML Shared Library Not Found")
    got = guarded("nvml", lambda: nvml.state(fake))
    assert got == {"unavailable": "nvml: nvmlInit failed: NVML Shared Library Not Found"}


def test_nvml_a_field_the_card_does_not_support_is_listed_the_others_kept():
    d = nvml.state(FakeNVML(broken={"nvmlDeviceGetPowerUsage", "nvmlDeviceGetComputeRunningProcesses"}))["devices"][0]
    assert "power_draw_w" not in d and d["power_limit_w"] == 250.0
    assert d["unavailable"] == {"power_draw_w": "NVMLError: Not Supported", "processes": "NVMLError: Not Supported"}


def test_unknown_throttle_bits_are_kept_in_hex():
    assert nvml.throttle_names(0x8 | 0x1000) == ["hw_slowdown", "0x1000"]


def test_nvml_energy_meter_reads_joules():
    meter = nvml.EnergyMeter(index=0, module=FakeNVML())
    assert meter.read_joules() == pytest.approx(1005.0)  # the meter's own check read 1002.5 J
    assert meter.source == "nvml"


def test_nvml_energy_meter_without_the_counter_is_unavailable():
    with pytest.raises(Unavailable, match="no total-energy counter: NVMLError: GPU is lost"):
        nvml.EnergyMeter(index=0, module=FakeNVML(energy_fails_after=0))


def test_visible_index_follows_cuda_visible_devices():
    assert nvml.visible_index({"CUDA_VISIBLE_DEVICES": "2,3"}) == 2
    assert nvml.visible_index({"CUDA_VISIBLE_DEVICES": "GPU-6f3a"}) == 0
    assert nvml.visible_index({}) == 0


# -- RAPL --------------------------------------------------------------------

def _zone(root, name, energy, top=262_143_328_850):
    z = root / name
    z.mkdir(parents=True)
    (z / "energy_uj").write_text(f"{energy}\n")
    (z / "max_energy_range_uj").write_text(f"{top}\n")
    return z


def test_rapl_sums_package_zones_and_unwraps_the_counter(tmp_path):
    z0 = _zone(tmp_path, "intel-rapl:0", 1_000_000, top=10_000_000)
    _zone(tmp_path, "intel-rapl:0:0", 5)  # a sub-zone (core): inside the package already
    z1 = _zone(tmp_path, "intel-rapl:1", 2_000_000)
    meter = rapl.EnergyMeter(tmp_path)
    (z0 / "energy_uj").write_text("500000\n")  # wrapped: 9 J + 0.5 J later
    (z1 / "energy_uj").write_text("3000000\n")  # +1 J
    assert meter.read_joules() == pytest.approx(10.5)


def test_rapl_missing_or_root_only_is_unavailable(tmp_path):
    with pytest.raises(Unavailable, match="no .*nothing-here"):
        rapl.EnergyMeter(tmp_path / "nothing-here")
    with pytest.raises(Unavailable, match="no RAPL package zone"):
        rapl.EnergyMeter(tmp_path)


# -- CPU ---------------------------------------------------------------------

def test_cpu_state_keeps_readable_fields_and_names_the_rest(tmp_path):
    (tmp_path / "pressure").write_text("some avg10=12.50 avg60=3.00 avg300=1.00 total=5\n"
                                       "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")

    def no_governor():
        raise FileNotFoundError(2, "No such file or directory", "/sys/.../scaling_governor")

    s = cpu.state({"model": lambda: "AMD EPYC", "governor": no_governor,
                   "pressure": lambda: cpu.pressure(tmp_path / "pressure")})
    assert s["model"] == "AMD EPYC"
    assert s["pressure"] == {"some_avg10": 12.5, "some_avg60": 3.0}
    assert s["unavailable"] == {"governor": "/sys/.../scaling_governor: No such file or directory"}


def test_snapshot_turns_a_raising_source_into_unavailable():
    def broken():
        raise RuntimeError("driver/library version mismatch")

    got = snapshot({"gpu": ("nvml", broken), "cpu_state": ("cpu", lambda: {"model": "x"})})
    assert got == {"gpu": {"unavailable": "nvml: RuntimeError: driver/library version mismatch"},
                   "cpu_state": {"model": "x"}}


# -- energy and memory of one benchmark ---------------------------------------

class ListMeter:
    source = "fake"

    def __init__(self, readings, fail_at=None):
        self.readings, self.i, self.fail_at = list(readings), 0, fail_at

    def read_joules(self):
        if self.fail_at is not None and self.i >= self.fail_at:
            raise OSError("counter gone")
        self.i += 1
        return self.readings[self.i - 1]

    def close(self):
        pass


def test_energy_counts_only_the_timed_calls():
    # calibration call (10 steps, 100 J), then two timed repeats of 20 steps: 4 J and 6 J
    m = usage.Metered(ListMeter([0, 100, 100, 104, 104, 110]))
    for steps in (10, 20, 20):
        m.begin()
        m.end(steps)
    # 10 J over 2 x 20 steps x batch 25 = 1000 samples
    assert m.energy(last_calls=2, samples_per_step=25) == {"joules_per_1000_samples": 10.0, "source": "fake"}


def test_energy_source_failing_partway_is_unavailable_and_the_run_goes_on():
    m = usage.Metered(ListMeter([0, 1, 1, 2], fail_at=3))
    for _ in range(3):
        m.begin()
        m.end(5)
    assert m.energy(2, 1) == {"unavailable": "fake: read failed partway: OSError: counter gone"}


def test_open_meter_picks_nvml_for_cuda_and_rapl_for_cpu():
    def missing():
        raise Unavailable("not here")

    opened = {"nvml": lambda: "nvml-meter", "rapl": missing}
    assert usage.open_meter("cuda:NVIDIA RTX", opened) == ("nvml-meter", None)
    assert usage.open_meter("gpu:NVIDIA RTX", opened) == ("nvml-meter", None)
    assert usage.open_meter("cpu", opened) == (None, {"unavailable": "rapl: not here"})


def test_memory_block_host_only_on_a_cpu_backend():
    backend = SimpleNamespace(NAME="openvino", device_peak_bytes=lambda: None)
    assert usage.memory_block(backend, host=lambda: 123_456_789) == {
        "host_peak_bytes": 123_456_789, "device_peak_bytes": None, "host_peak_scope": "process",
        "unavailable": {"device": "the openvino backend reports no device memory here (CPU device)"}}


def test_memory_block_device_source_that_errors_is_unavailable():
    def boom():
        raise RuntimeError("CUDA error: unspecified launch failure")

    got = usage.memory_block(SimpleNamespace(NAME="torch", device_peak_bytes=boom), host=lambda: 5)
    assert got["host_peak_bytes"] == 5 and got["device_peak_bytes"] is None
    assert got["unavailable"] == {"device": "device: RuntimeError: CUDA error: unspecified launch failure"}


def test_host_peak_is_this_process_peak_rss_and_resets_per_benchmark(tmp_path):
    assert usage.host_peak_bytes() > 10 * 2**20
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n")
    assert usage.host_peak_bytes(status) == 204800 * 1024
    resets = []
    backend = SimpleNamespace(reset_device_peak=lambda: resets.append("device"))
    assert usage.reset_peaks(backend, clear_refs=tmp_path / "clear_refs") is True
    assert (tmp_path / "clear_refs").read_text() == "5" and resets == ["device"]
    assert usage.reset_peaks(None, clear_refs=tmp_path / "no" / "clear_refs") is False


def test_settle_clears_keras_collects_and_trims_the_heap():
    calls = []
    keras = SimpleNamespace(backend=SimpleNamespace(clear_session=lambda: calls.append("clear_session")))
    libc = SimpleNamespace(malloc_trim=lambda pad: calls.append(("malloc_trim", pad)))
    assert usage.settle(keras, libc) == ("clear_session", "gc", "malloc_trim")
    assert calls == ["clear_session", ("malloc_trim", 0)]


def test_settle_skips_what_this_machine_lacks_or_what_fails():
    def boom():
        raise RuntimeError("clear_session: backend gone")

    keras = SimpleNamespace(backend=SimpleNamespace(clear_session=boom))
    # macOS and musl have no malloc_trim: that step is skipped, not an error
    assert usage.settle(keras, libc=SimpleNamespace()) == ("gc",)


SETTLE_CHILD = """
import ctypes
import os
from types import SimpleNamespace
from bench.measure import usage

def rss():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS:")).split()[1]) * 1024

libc = ctypes.CDLL(None)
libc.mallopt(-3, 4 * 2**20)  # M_MMAP_THRESHOLD 4 MiB: the 1 MiB blocks come from the heap
# 1 MiB blocks, each followed by a 64 KiB one that stays (bigger than any hole the
# imports left, so it lands right after its block):
# freeing the big ones leaves holes inside the heap, which free() cannot hand back
pairs = [(ctypes.create_string_buffer(2**20), ctypes.create_string_buffer(2**16)) for _ in range(64)]
kept = [small for _, small in pairs]
del pairs
before = rss()
steps = usage.settle(SimpleNamespace(backend=SimpleNamespace(clear_session=lambda: None)))
print(before - rss(), *steps)
"""


def test_settle_hands_a_freed_heap_back_before_the_next_benchmark():
    # the real thing, in a child process (mallopt changes its allocator): 64 MiB
    # freed but kept by glibc, as an earlier benchmark leaves it, is given back
    if not hasattr(ctypes.CDLL(None), "malloc_trim"):
        pytest.skip("no glibc malloc_trim here")
    out = subprocess.run([sys.executable, "-c", SETTLE_CHILD], capture_output=True, text=True, check=True).stdout
    freed, *steps = out.split()
    assert steps == ["clear_session", "gc", "malloc_trim"]
    assert int(freed) > 48 * 2**20, out


def test_memory_block_says_which_settle_steps_ran():
    backend = SimpleNamespace(NAME="jax", device_peak_bytes=lambda: None)
    got = usage.memory_block(backend, host=lambda: 5, scope="benchmark", settled=("gc",))
    assert got["settled"] == ["gc"] and got["host_peak_bytes"] == 5


def test_memory_block_says_its_scope():
    backend = SimpleNamespace(NAME="torch", device_peak_bytes=lambda: 7)
    assert usage.memory_block(backend, host=lambda: 5, scope="benchmark") == {
        "host_peak_bytes": 5, "device_peak_bytes": 7, "host_peak_scope": "benchmark", "unavailable": {}}


# -- the environment block ------------------------------------------------------

def test_environment_block_takes_the_nvml_driver_and_the_keras_config():
    start = {"gpu": {"driver": "570.86.10", "devices": []}, "cpu_state": {"model": "Ryzen"}}
    end = {"gpu": {"unavailable": "nvml: gone"}, "cpu_state": {"model": "Ryzen"}}
    children = [{"device": {"device": "cuda:RTX", "cuda": "12.8", "threads": 8},
                 "keras_config": {"floatx": "float32", "dtype_policy": "mixed_float16"}}]
    env = machine.environment_block(start, end, children, {"OMP_NUM_THREADS": "4", "HOME": "/x"})
    assert env["driver"] == "570.86.10"
    assert env["keras_config"] == {"floatx": "float32", "dtype_policy": "mixed_float16"}
    assert env["thread_settings"]["env"] == {"OMP_NUM_THREADS": "4"}
    assert env["thread_settings"]["backend_threads"] == 8
    assert env["telemetry_end"] == end and env["cpu_state"] == {"model": "Ryzen"}


def test_a_results_energy_is_the_median_workers_and_its_memory_the_least():
    def worker(host, device, joules):
        energy = {"joules_per_1000_samples": joules, "source": "nvml"} if joules else {"unavailable": "nvml: gone"}
        return {"memory": {"host_peak_bytes": host, "device_peak_bytes": device, "host_peak_scope": "benchmark",
                           "unavailable": {}}, "energy": energy}

    got = usage.combine([worker(500, 70, 2.0), worker(400, None, None), worker(900, 50, 3.0)])
    assert got["memory"]["host_peak_bytes"] == 400 and got["memory"]["device_peak_bytes"] == 50
    assert got["energy"] == {"joules_per_1000_samples": 2.5, "source": "nvml"}
    assert usage.combine([worker(1, None, None)])["energy"] == {"unavailable": "nvml: gone"}


def test_trace_appends_a_line_per_call_only_when_asked(tmp_path):
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nRssAnon:\t  102400 kB\nRssFile:\t   51200 kB\nVmHWM:\t  204800 kB\nThreads:\t2\n")
    trace = tmp_path / "trace.txt"
    usage.trace("build", environ={}, status=status)
    assert not trace.exists()  # off unless $BENCH_MEMORY_TRACE names a file
    env = {usage.TRACE_VAR: str(trace)}
    usage.trace("reset:cnn/predict", environ=env, status=status)
    usage.trace("call:126", environ=env, status=status)
    pid = str(os.getpid())
    assert trace.read_text().splitlines() == [f"{pid} reset:cnn/predict 102400 51200 204800 2",
                                              f"{pid} call:126 102400 51200 204800 2"]
    # a diagnostic never fails a benchmark: no such field, no such folder
    usage.trace("gate", environ={usage.TRACE_VAR: str(tmp_path / "no" / "trace.txt")}, status=status)
    (tmp_path / "short").write_text("Name:\tpython\nRssAnon:\t  102400 kB\n")
    usage.trace("gate", environ=env, status=tmp_path / "short")
    assert len(trace.read_text().splitlines()) == 2
