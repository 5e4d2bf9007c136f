//! A list of sleeping tasks that any number of them can join without allocation, woken all
//! at once. The adaptive gate and [`crate::monitor::Stop`] are built on it.

use crate::atomic::{AtomicU32, Ordering};
use core::cell::RefCell;
use core::task::{Context, Poll, Waker};

use embassy_sync::blocking_mutex::Mutex;
use embassy_sync::blocking_mutex::raw::RawMutex;

/// Waker slots in the list itself; waiters beyond these are reached through a chain.
const SLOTS: usize = 16;

/// The sleeping tasks.
///
/// The list holds a small fixed table of waker slots; a new waiter takes over a slot and
/// carries the waker it displaced inside its own future ([`Registration`]), which it wakes
/// when it completes or is dropped. The wakers form chains through the waiting futures
/// themselves, so 10,000 waiters need no allocation and no `unsafe`, and [`WaitList::wake_all`]
/// wakes each of them exactly once.
pub(crate) struct WaitList<M: RawMutex> {
    state: Mutex<M, RefCell<State>>,
    waiting: AtomicU32,
}

struct State {
    slots: [Option<Waker>; SLOTS],
    next: usize,
    /// Bumped on every wake-up: registrations from earlier epochs were consumed.
    epoch: u32,
    /// Bumped when a dropped waiter hands its carried waker back: registrations from
    /// before may have lost their chain and are renewed on their next poll.
    repair: u32,
}

impl<M: RawMutex> WaitList<M> {
    pub(crate) const fn new() -> WaitList<M> {
        WaitList {
            state: Mutex::new(RefCell::new(State {
                slots: [const { None }; SLOTS],
                next: 0,
                epoch: 0,
                repair: 0,
            })),
            waiting: AtomicU32::new(0),
        }
    }

    /// How many registrations are sleeping now.
    pub(crate) fn waiting(&self) -> u32 {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Wakes every waiter.
    pub(crate) fn wake_all(&self) {
        let wakers = self.state.lock(|state| {
            let mut state = state.borrow_mut();
            state.epoch = state.epoch.wrapping_add(1);
            core::mem::replace(&mut state.slots, [const { None }; SLOTS])
        });
        // Woken outside the lock: a waker may run arbitrary executor code.
        wakers.into_iter().flatten().for_each(Waker::wake);
    }
}

/// One waiter's place in a [`WaitList`]: kept in its future, released when it completes
/// ([`Registration::poll`] returns ready) or is dropped ([`Registration::release`]).
#[derive(Default)]
pub(crate) struct Registration {
    /// `(epoch, repair)` of the list when this waiter last registered.
    registration: Option<(u32, u32)>,
    /// The waker we registered, to notice when the task's waker changes.
    own: Option<Waker>,
    /// The waker this waiter displaced from a slot; it must be woken when we finish.
    carried: Option<Waker>,
    counted: bool,
}

impl Registration {
    pub(crate) const fn new() -> Registration {
        Registration {
            registration: None,
            own: None,
            carried: None,
            counted: false,
        }
    }

    /// Whether it carries another waiter's waker (for `Debug`).
    pub(crate) fn carries_waker(&self) -> bool {
        self.carried.is_some()
    }

    /// Whether it is registered (for `Debug`).
    pub(crate) fn is_registered(&self) -> bool {
        self.registration.is_some()
    }

    /// Ready once `ready()` holds. `ready` is checked first without the lock, then again
    /// under it after registering, so a change made before `wake_all` is never missed.
    pub(crate) fn poll<M: RawMutex>(
        &mut self,
        list: &WaitList<M>,
        cx: &mut Context<'_>,
        ready: impl Fn() -> bool,
    ) -> Poll<()> {
        if ready() {
            self.finish(list);
            return Poll::Ready(());
        }
        let mut to_wake = None;
        let done = list.state.lock(|state| {
            let mut state = state.borrow_mut();
            let current = (state.epoch, state.repair);
            let same_task = self.own.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
            if self.registration != Some(current) || !same_task {
                // Our earlier chain (if any) was consumed or broken: pass on what we carry
                // and take a slot again.
                to_wake = self.carried.take();
                let slot = state.next;
                state.next = (slot + 1) % SLOTS;
                self.carried = state.slots[slot].replace(cx.waker().clone());
                self.own = Some(cx.waker().clone());
                self.registration = Some(current);
            }
            ready()
        });
        if let Some(waker) = to_wake {
            waker.wake();
        }
        if done {
            self.finish(list);
            return Poll::Ready(());
        }
        if !self.counted {
            self.counted = true;
            list.waiting.fetch_add(1, Ordering::Relaxed);
        }
        Poll::Pending
    }

    fn finish<M: RawMutex>(&mut self, list: &WaitList<M>) {
        if let Some(waker) = self.carried.take() {
            waker.wake();
        }
        if self.counted {
            self.counted = false;
            list.waiting.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// For the owning future's `Drop`: leaves the list consistent.
    pub(crate) fn release<M: RawMutex>(&mut self, list: &WaitList<M>) {
        if self.carried.is_some() {
            // The waiter we carry is no longer reachable from the list: make every
            // registration renew itself on its next poll, and poll that waiter now.
            list.state.lock(|state| {
                let mut state = state.borrow_mut();
                state.repair = state.repair.wrapping_add(1);
            });
        }
        self.finish(list);
    }
}
