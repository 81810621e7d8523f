//! The few parallel patterns the scanner uses: on the rayon thread pool with the `parallel`
//! feature, one after another without it. Results come in input order either way, so a scan
//! gives the same documents and report with or without the feature.

#[cfg(feature = "parallel")]
use rayon::prelude::*;

/// Runs `a` and `b`, side by side when parallel.
pub(crate) fn join<RA: Send, RB: Send>(
    a: impl FnOnce() -> RA + Send,
    b: impl FnOnce() -> RB + Send,
) -> (RA, RB) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

/// `f` of each item, in order.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        items.par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().map(f).collect()
    }
}

/// `f` of each run of `size` items (the last one may be shorter), in order.
pub(crate) fn map_chunks<T: Sync, R: Send>(
    items: &[T],
    size: usize,
    f: impl Fn(&[T]) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        items.par_chunks(size).map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.chunks(size).map(f).collect()
    }
}

/// Runs `f` on each item with a state `init` makes once per thread (once in all without the
/// feature).
pub(crate) fn for_each_init<T: Send, S>(
    items: &mut [T],
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, &mut T) + Sync + Send,
) {
    #[cfg(feature = "parallel")]
    {
        items.par_iter_mut().for_each_init(init, f);
    }
    #[cfg(not(feature = "parallel"))]
    {
        let mut state = init();
        for item in items {
            f(&mut state, item);
        }
    }
}

/// `f` of each pair of `a` and `b` (of the same length), in order, with a state `init` makes once
/// per thread (once in all without the feature).
pub(crate) fn map_pairs_init<A: Send, B: Send, S, R: Send>(
    a: Vec<A>,
    b: Vec<B>,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, (A, B)) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        a.into_par_iter().zip(b).map_init(init, f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        let mut state = init();
        a.into_iter()
            .zip(b)
            .map(|pair| f(&mut state, pair))
            .collect()
    }
}
