"""FasterOfTwo: which of two equivalent functions it calls, on a clock the test controls."""

from sbpbench.threads import FIRST_WAIT, LONGEST_WAIT, STRAGGLER, WINDOW, FasterOfTwo


class Machine:
    """Two functions whose calls take the times the test sets, on a clock of their own."""

    def __init__(self, threaded: float, serial: float):
        self.now = 0.0
        self.times = {"threaded": threaded, "serial": serial}
        self.log: list[str] = []

    def clock(self) -> float:
        return self.now

    def function(self, name):
        def run(x):
            self.now += self.times[name]
            self.log.append(name)
            return (name, x)
        return run

    def chooser(self) -> FasterOfTwo:
        return FasterOfTwo(self.function("threaded"), self.function("serial"), clock=self.clock)


def test_measures_one_thread_first_then_keeps_the_faster_threads():
    machine = Machine(threaded=1.0, serial=2.0)
    pick = machine.chooser()
    results = [pick(k) for k in range(WINDOW + 5000)]
    assert results[7] == ("serial", 7) and results[-1] == ("threaded", WINDOW + 4999)
    assert machine.log[:WINDOW] == ["serial"] * WINDOW
    assert pick.calls == [5000, WINDOW]


def serial_runs(log: list[str]) -> list[int]:
    """Lengths of the runs of one-thread calls in a log."""
    return [len(run) for run in "".join("s" if name == "serial" else "t" for name in log).split("t") if run]


def test_threads_slower_on_average_are_left_after_a_window_and_tried_again_later():
    machine = Machine(threaded=3.0, serial=2.0)
    pick = machine.chooser()
    for _ in range(WINDOW + (1 + WINDOW) + FIRST_WAIT + (1 + WINDOW) + 2 * FIRST_WAIT):
        pick(0)
    # a window on one thread; a lost window of threads (after the call that wakes them); the wait;
    # another lost window; twice the wait
    assert serial_runs(machine.log) == [WINDOW, FIRST_WAIT, 2 * FIRST_WAIT]
    assert pick.calls[0] == 2 * (1 + WINDOW)


def test_a_straggler_sends_it_back_to_one_thread_and_the_wait_doubles_up_to_its_longest():
    machine = Machine(threaded=1.0, serial=2.0)
    pick = machine.chooser()
    for _ in range(WINDOW + 10):
        pick(0)
    machine.times["threaded"] = STRAGGLER * 2.0 + 0.5  # the machine gets busy: every threaded call straggles
    busy = len(machine.log)
    waits = [min(FIRST_WAIT << k, LONGEST_WAIT) for k in range(8)]
    for _ in range(1 + sum(waits) + 2 * len(waits)):  # each try: the call that wakes the threads, then a straggler
        pick(0)
    assert machine.log[busy] == "threaded" and serial_runs(machine.log[busy:]) == waits
    machine.times["threaded"] = 1.0  # idle again: the next try holds a whole window and wins it
    for _ in range(LONGEST_WAIT + 2 * WINDOW):
        pick(0)
    assert machine.log[-WINDOW:] == ["threaded"] * WINDOW
    machine.times["threaded"] = STRAGGLER * 2.0 + 0.5  # and the wait starts over
    busy = len(machine.log)
    for _ in range(1 + FIRST_WAIT + 2):
        pick(0)
    assert serial_runs(machine.log[busy:]) == [FIRST_WAIT]


def test_jitter_short_of_a_straggler_does_not_leave_threads():
    """A shared machine's jitter (here a call in fifty three times the one-thread mean) is not a
    thread waiting for a core: threads that win on average are kept."""
    machine = Machine(threaded=1.0, serial=2.0)
    pick = machine.chooser()
    for k in range(5 * WINDOW):
        machine.times["threaded"] = 6.0 if k % 50 == 0 else 1.0
        pick(0)
    assert pick.calls == [4 * WINDOW, WINDOW]
