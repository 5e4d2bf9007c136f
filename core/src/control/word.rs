//! The hot-path word: everything a request decision reads, in one atomic load.

use crate::{AdmissionMode, Class, Mode, Threshold};

use super::{Settings, Transitions};

/// Both thresholds (Fess's integers clamped to `0..=100`, 100 meaning off), whether each
/// class is rejected (in the limit mode: armed) now, the mode and the admission mode. Everything a request needs is one relaxed load of
/// it, and a reconfiguration is one store: readers see the old settings or the new, never a
/// mix.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Word(pub(super) u32);

impl Word {
    pub(super) const WEB_SHIFT: u32 = 0;
    pub(super) const API_SHIFT: u32 = 8;
    pub(super) const REJECT_WEB: u32 = 1 << 16;
    pub(super) const REJECT_API: u32 = 1 << 17;
    const MONITOR: u32 = 1 << 18;
    /// `load.control.admission=limit`: admitted requests are counted against a cap.
    pub(super) const LIMIT: u32 = 1 << 19;

    /// The word of these settings, with each class armed as said unless its threshold is
    /// off: a class that is not controlled is never armed (the rule is here, once).
    pub(super) const fn new(
        web: Threshold,
        api: Threshold,
        reject_web: bool,
        reject_api: bool,
        mode: Mode,
        admission: AdmissionMode,
    ) -> Word {
        Word(
            (web.get() as u32) << Self::WEB_SHIFT
                | (api.get() as u32) << Self::API_SHIFT
                | if reject_web && !web.is_off() {
                    Self::REJECT_WEB
                } else {
                    0
                }
                | if reject_api && !api.is_off() {
                    Self::REJECT_API
                } else {
                    0
                }
                | match mode {
                    Mode::Enforce => 0,
                    Mode::Monitor => Self::MONITOR,
                }
                | match admission {
                    AdmissionMode::Threshold => 0,
                    AdmissionMode::Limit => Self::LIMIT,
                },
        )
    }

    #[inline]
    pub(super) const fn limit(self) -> bool {
        self.0 & Self::LIMIT != 0
    }

    /// The threshold of the web (`api == false`) or API class.
    #[inline]
    pub(super) const fn threshold(self, api: bool) -> Threshold {
        Threshold::from_stored(
            (self.0
                >> if api {
                    Self::API_SHIFT
                } else {
                    Self::WEB_SHIFT
                }) as u8,
        )
    }

    /// Whether the class (`api` or web) is controlled: its threshold is not off.
    #[inline]
    pub(super) const fn controlled(self, api: bool) -> bool {
        !self.threshold(api).is_off()
    }

    #[inline]
    pub(super) const fn armed(self, api: bool) -> bool {
        self.0
            & if api {
                Self::REJECT_API
            } else {
                Self::REJECT_WEB
            }
            != 0
    }

    #[inline]
    pub(super) const fn monitor(self) -> bool {
        self.0 & Self::MONITOR != 0
    }

    /// The same settings with these armed states (a class that is not controlled is never
    /// armed, as in [`Word::new`]).
    pub(super) const fn with_armed(self, web: bool, api: bool) -> Word {
        Word(
            self.0 & !(Self::REJECT_WEB | Self::REJECT_API)
                | if web && self.controlled(false) {
                    Self::REJECT_WEB
                } else {
                    0
                }
                | if api && self.controlled(true) {
                    Self::REJECT_API
                } else {
                    0
                },
        )
    }

    /// Whether the class whose threshold byte sits at `shift` of `word` is off: the hot
    /// paths' test on the word they loaded ([`Threshold::is_off`] on the stored byte).
    #[inline]
    pub(super) const fn off_at(word: u32, shift: u32) -> bool {
        Threshold::from_stored((word >> shift) as u8).is_off()
    }

    pub(super) fn settings(self) -> Settings {
        Settings {
            web_threshold: self.threshold(false),
            api_threshold: self.threshold(true),
            mode: if self.monitor() {
                Mode::Monitor
            } else {
                Mode::Enforce
            },
            admission: if self.limit() {
                AdmissionMode::Limit
            } else {
                AdmissionMode::Threshold
            },
        }
    }

    /// The classes whose armed state differs in `next`.
    pub(super) fn transitions_to(self, next: Word) -> Transitions {
        let mut transitions = Transitions::NONE;
        for (class, api) in [(Class::Web, false), (Class::Api, true)] {
            if self.armed(api) != next.armed(api) {
                transitions = transitions.with(class, next.armed(api));
            }
        }
        transitions
    }
}
