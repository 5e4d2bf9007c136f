//! The [`Runtime`] trait: what the handles need of an executor.

use std::future::Future;

use load_core::time::Sleep;

/// A runtime as the handles need it: spawn a task, and sleep (the [`Sleep`] supertrait).
///
/// A runtime is a value: the adapters' unit types (`load_smol::Smol`,
/// `load_async_std::AsyncStd`) spawn on the runtime's global executor, and others carry a
/// handle (`load_tokio::Tokio`, `load_smol::SmolExecutor` for an executor of your own).
/// Constructors without `_on` take `R::default()` when the runtime has one; the `_on`
/// constructors take the value.
///
/// # Example
///
/// A runtime of your own: a thread per task, and a thread that sleeps.
///
/// ```
/// use std::future::Future;
/// use std::time::Duration;
///
/// #[derive(Clone, Debug, Default)]
/// struct Threads;
///
/// impl load_core::time::Sleep for Threads {
///     async fn sleep(&self, duration: Duration) {
///         let (done, wait) = futures::channel::oneshot::channel();
///         std::thread::spawn(move || {
///             std::thread::sleep(duration);
///             let _ = done.send(());
///         });
///         let _ = wait.await;
///     }
/// }
///
/// impl load_runtime::Runtime for Threads {
///     fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
///         std::thread::spawn(move || futures::executor::block_on(task));
///     }
/// }
/// ```
pub trait Runtime: Sleep + Clone + Send + Sync + 'static {
    /// Runs `task` in the background to completion (handles stop their tasks through a
    /// [`load_core::monitor::Stop`], not by cancelling them).
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static);
}
