//! The event loop: runs events in virtual time to the end of the scenario on one thread (the
//! two-thread run is `split`'s), reporting progress every million events or so.

use super::*;

impl Engine<'_> {
    /// Run to the end on up to `threads` threads (two at most: see `split` for when a run can
    /// be split; the result is the same bit for bit either way).
    pub fn run_on(
        self,
        threads: usize,
        when: SplitWhen,
        progress: &mut dyn FnMut(&Progress),
    ) -> Outcome {
        match split::plan(&self, when) {
            Some(cut) if threads >= 2 => self.run_split(cut, progress),
            _ => self.run(progress),
        }
    }

    /// Let every sender start (at time 0, before any event), and schedule the first stall of
    /// every host that stalls.
    pub(super) fn start(&mut self) {
        for i in 0..self.flows.len() {
            self.pump(i, 0);
        }
        self.schedule_stalls();
    }

    /// Run to the end on this thread.
    pub fn run(mut self, progress: &mut dyn FnMut(&Progress)) -> Outcome {
        self.start();
        let mut next_report = PROGRESS_EVERY;
        while let Some((t, ev)) = self.events.pop_until(self.end) {
            self.now = t;
            self.event_count += 1;
            self.dispatch(ev);
            if self.event_count >= next_report {
                next_report += PROGRESS_EVERY;
                progress(&self.progress());
            }
        }
        self.now = self.end;
        progress(&self.progress());
        self.finish()
    }

    #[inline(always)]
    pub(super) fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive(p) => self.on_arrive(p),
            Ev::Timer(x) => self.on_timer((x / 2) as usize, (x % 2) as usize),
            Ev::Stall(x) => self.on_stall((x / 2) as usize, (x % 2) as usize),
            Ev::Cross(s) => self.on_cross(s as usize),
            Ev::Transfer(s) => self.on_transfer(s as usize),
            Ev::Sample => self.on_sample(),
            Ev::Second => self.on_second(),
        }
    }

    pub(super) fn progress(&self) -> Progress {
        Progress {
            sim_ns: self.now,
            duration_ns: self.end,
            events: self.event_count,
            packets: self.packet_count,
        }
    }
}
