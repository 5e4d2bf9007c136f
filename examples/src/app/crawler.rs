//! The demo's background work: a crawler that passes the adaptive gate before each unit.

use std::sync::atomic::Ordering;
use std::time::Duration;

use load_smol::Runtime;

use super::App;
use crate::corpus::Document;
use crate::search::{self, Search, SearchError};

/// Documents the crawler indexes per unit of work (one `_bulk` request, one pass of the
/// adaptive gate).
pub const BATCH: usize = 10;

impl<R: Runtime + Default> App<R> {
    /// The demo crawler, one unit of work every ~50 ms, each behind the adaptive gate, until
    /// [`App::shutdown`]. With a cluster, a unit indexes the next [`BATCH`] documents of the
    /// corpus (creating the index first if missing; after the last document it starts over,
    /// re-indexing); single-box, it only counts.
    pub async fn crawl(&self) {
        if !self.crawler {
            log::info!("The crawler is off (--crawler off): background work is quiet");
            return;
        }
        let work = async {
            let mut next = 0;
            // The index is created at start, before the first pass of the gate.
            let mut index_ready = match &self.search {
                Some(search) => self.prepare_index(search).await,
                None => true,
            };
            let mut failing = false;
            while self.background.wait().await.is_proceed() {
                if let Some(search) = &self.search {
                    let outcome = self.crawl_unit(search, next, &mut index_ready).await;
                    match outcome {
                        Ok(indexed) => {
                            self.indexed.fetch_add(indexed as u64, Ordering::Relaxed);
                            next = (next + BATCH) % self.corpus.len();
                            if failing {
                                log::info!("Indexing resumed");
                                failing = false;
                            }
                        }
                        Err(error) => {
                            self.index_errors.fetch_add(1, Ordering::Relaxed);
                            if !failing {
                                log::warn!("Indexing failed, retrying every second: {error}");
                                failing = true;
                            }
                            load_smol::time::Sleep::sleep(&R::default(), search::RETRY_PAUSE).await;
                            continue;
                        }
                    }
                }
                self.crawled.fetch_add(1, Ordering::Relaxed);
                load_smol::time::Sleep::sleep(&R::default(), Duration::from_millis(50)).await;
            }
        };
        let stop = self.stop.wait();
        futures::pin_mut!(work, stop);
        futures::future::select(work, stop).await;
    }

    /// Creates the index if missing; whether it exists now (a failure is logged, and the
    /// crawler tries again before its first batch).
    async fn prepare_index(&self, search: &Search) -> bool {
        match search.ensure_index().await {
            Ok(true) => {
                log::info!("Created the index {} with its mapping", search.index());
                true
            }
            Ok(false) => true,
            Err(error) => {
                log::warn!("Cannot prepare the index {}: {error}", search.index());
                false
            }
        }
    }

    async fn crawl_unit(
        &self,
        search: &Search,
        next: usize,
        index_ready: &mut bool,
    ) -> Result<usize, SearchError> {
        if !*index_ready {
            if search.ensure_index().await? {
                log::info!("Created the index {} with its mapping", search.index());
            }
            *index_ready = true;
        }
        let batch: Vec<Document> = (next..next + BATCH.min(self.corpus.len()))
            .map(|id| self.corpus.document(id))
            .collect();
        search.index_documents(&batch).await
    }
}
