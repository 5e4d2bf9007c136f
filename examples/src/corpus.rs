//! The demo crawler's documents: a generated corpus, the same on every machine (a fixed
//! seed), with a vocabulary whose word frequencies fall off like natural language's (Zipf),
//! and queries drawn from the same vocabulary for load generators.
//!
//! ```
//! use load_examples::corpus::Corpus;
//!
//! let corpus = Corpus::new(3000);
//! let doc = corpus.document(42);
//! assert_eq!(doc, corpus.document(42)); // the same every time
//! assert!(doc.content.split(' ').count() >= 40);
//! let query = corpus.query(7);
//! assert!(!query.is_empty());
//! ```

/// Documents in the corpus by default.
pub const DEFAULT_DOCUMENTS: usize = 3000;

/// Distinct words in the vocabulary.
pub const VOCABULARY: usize = 2000;

const SYLLABLES: [&str; 40] = [
    "ka", "lo", "mi", "ren", "sto", "va", "dor", "pel", "ti", "gan", "ro", "su", "bel", "cha",
    "fen", "li", "mar", "no", "qua", "sel", "tor", "ul", "vin", "wey", "xo", "yal", "zer", "an",
    "bri", "co", "da", "el", "fi", "gor", "ha", "is", "ju", "kel", "lum", "mo",
];

/// One generated document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// Its number in the corpus (also its id in the index).
    pub id: usize,
    /// 3 to 6 words.
    pub title: String,
    /// 40 to 120 words.
    pub content: String,
    /// A made-up address, as a crawler would have found it.
    pub url: String,
}

/// A corpus of `len` documents over a fixed vocabulary.
#[derive(Clone, Debug)]
pub struct Corpus {
    len: usize,
    words: Vec<String>,
}

/// A small, good, seedable generator: the simulation's splitmix64 ([`load_sim::Rng`]),
/// seeded apart from it.
#[derive(Clone, Debug)]
pub struct Rng(load_sim::Rng);

impl Rng {
    /// A generator seeded with `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Rng {
        Rng(load_sim::Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (`n` above 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// A float in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        #[allow(clippy::cast_precision_loss)] // 53 bits are exact
        let bits = (self.next_u64() >> 11) as f64;
        bits / (1u64 << 53) as f64
    }
}

impl Corpus {
    /// A corpus of `len` documents (at least 1).
    #[must_use]
    pub fn new(len: usize) -> Corpus {
        let mut words = Vec::with_capacity(VOCABULARY);
        let mut seen = std::collections::HashSet::new();
        let mut rng = Rng::new(1);
        while words.len() < VOCABULARY {
            let syllables = 2 + rng.below(2);
            let word: String = (0..syllables)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect();
            if seen.insert(word.clone()) {
                words.push(word);
            }
        }
        Corpus {
            len: len.max(1),
            words,
        }
    }

    /// How many documents there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the corpus is empty (never: it has at least one document).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// A word by Zipf's law: rank `r` (0-based) comes up about `1 / (r + 1)` as often as
    /// the first.
    fn word(&self, rng: &mut Rng) -> &str {
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let rank = ((VOCABULARY as f64 + 1.0).powf(rng.unit()) - 1.0) as usize;
        &self.words[rank.min(VOCABULARY - 1)]
    }

    fn words(&self, rng: &mut Rng, n: usize) -> String {
        let mut out = String::new();
        for i in 0..n {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(self.word(rng));
        }
        out
    }

    /// Document `id` (taken modulo the corpus size): the same for the same id.
    #[must_use]
    pub fn document(&self, id: usize) -> Document {
        let id = id % self.len;
        let mut rng = Rng::new(0xD0C0_0000 + id as u64);
        let title_words = 3 + rng.below(4);
        let content_words = 40 + rng.below(81);
        Document {
            id,
            title: self.words(&mut rng, title_words),
            content: self.words(&mut rng, content_words),
            url: format!("https://docs.example/{}/{id}.html", self.words[id % 50]),
        }
    }

    /// Query number `n`: one or two words, drawn as the documents' words are (frequent words
    /// more often), so most queries match many documents and some few.
    #[must_use]
    pub fn query(&self, n: u64) -> String {
        let mut rng = Rng::new(0x0051_E4C7_0000 ^ n);
        let words = 1 + rng.below(2);
        self.words(&mut rng, words)
    }

    /// Query number `n` of exactly `words` words (at least one), drawn as
    /// [`Corpus::query`]'s are: a longer query reads more postings, so it costs the
    /// cluster more (load generators use it to make each search heavier).
    #[must_use]
    pub fn query_words(&self, n: u64, words: usize) -> String {
        let mut rng = Rng::new(0x0051_E4C7_0000 ^ n);
        self.words(&mut rng, words.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generator's first outputs are those of the splitmix64 the corpus was written
    /// with: the closed loop's 1x rate depends on the corpus it generates.
    #[test]
    fn the_generator_is_the_corpus_s_splitmix64() {
        let mut rng = Rng::new(1);
        assert_eq!(rng.next_u64(), 0x79BF_AE01_79B0_AE6B);
        assert_eq!(rng.next_u64(), 0xCDAC_BBC9_DE73_113D);
    }

    #[test]
    fn longer_queries_have_their_length() {
        let corpus = Corpus::new(10);
        assert_eq!(corpus.query_words(5, 6).split(' ').count(), 6);
        assert_eq!(corpus.query_words(5, 0).split(' ').count(), 1);
        assert_eq!(corpus.query_words(5, 6), corpus.query_words(5, 6));
        assert_ne!(corpus.query_words(5, 6), corpus.query_words(6, 6));
    }

    #[test]
    fn the_corpus_is_fixed_and_varied() {
        let corpus = Corpus::new(100);
        assert_eq!(corpus.words.len(), VOCABULARY);
        let a = corpus.document(3);
        assert_eq!(a, Corpus::new(100).document(3));
        assert_eq!(corpus.document(103), a, "ids wrap around the corpus");
        assert_ne!(corpus.document(4).content, a.content);
        let words = a.content.split(' ').count();
        assert!((40..=120).contains(&words), "{words}");
        // Frequent words come up far more often than rare ones.
        let mut counts = std::collections::HashMap::new();
        for id in 0..100 {
            for word in corpus.document(id).content.split(' ') {
                *counts.entry(word.to_owned()).or_insert(0) += 1;
            }
        }
        let first = counts.get(&corpus.words[0]).copied().unwrap_or(0);
        let late = counts.get(&corpus.words[1500]).copied().unwrap_or(0);
        assert!(first > 10 * late.max(1), "{first} vs {late}");
    }

    #[test]
    fn queries_use_the_vocabulary() {
        let corpus = Corpus::new(10);
        for n in 0..100 {
            for word in corpus.query(n).split(' ') {
                assert!(corpus.words.iter().any(|w| w == word), "{word}");
            }
        }
    }
}
