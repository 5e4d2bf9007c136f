//! The properties reader against Java's own: a round trip through a model of
//! `Properties.store` (property test, no Java needed), and a differential test that runs
//! `java.util.Properties` (Java 17) over a generated corpus of Fess-like files and compares
//! every known key (ignored without Java; `.ci/run` runs it).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use load_core::config::keys;
use load_core::properties::Properties;
use proptest::prelude::*;

/// Escapes a value for comparison: printable ASCII as is, everything else `\u{..}`; an
/// unpaired surrogate (Java keeps it) is U+FFFD, as the reader makes it.
fn show(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        if (' '..='~').contains(&c) && c != '\\' {
            out.push(c);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
    out
}

/// What the reader makes of a file: `None` when it refuses it, else the last value of
/// each known key (`<cut>` and the kept part for a value longer than it keeps).
fn read(bytes: &[u8]) -> Option<BTreeMap<&'static str, String>> {
    let mut values = BTreeMap::new();
    for entry in Properties::new(bytes) {
        let entry = entry.ok()?;
        if let Some(key) = keys::ALL.iter().find(|k| **k == entry.key()) {
            let shown = show(entry.value());
            values.insert(
                *key,
                if entry.value_is_complete() {
                    shown
                } else {
                    format!("<cut>{shown}")
                },
            );
        }
    }
    Some(values)
}

// ---- a model of Properties.store, and a round trip ------------------------------------------

/// `Properties.saveConvert`: how Java writes a key or value (ISO-8859-1 output, so every
/// character above `~` as `\uXXXX` UTF-16 code units).
fn store_escape(text: &str, is_key: bool) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        match c {
            ' ' if i == 0 || is_key => out.push_str("\\ "),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if (' '..='~').contains(&c) => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04X}");
                }
            }
        }
    }
    out
}

fn value_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "7",
            "80",
            " ",
            "\t",
            "=",
            ":",
            "#",
            "!",
            "\\",
            "é",
            "日本",
            "\u{1F600}",
            "a",
            "x y",
            "\n",
            "http://h:9200/",
            "\u{c}",
        ]),
        0..12,
    )
    .prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Files written the way `Properties.store` writes them read back to the same values.
    #[test]
    fn what_java_stores_reads_back(
        entries in prop::collection::vec((prop::sample::select(keys::ALL.to_vec()), value_text()), 0..20),
        comment in "[ -~]{0,30}",
        crlf in any::<bool>(),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut file = format!("#{}{eol}#Mon Nov 30 12:00:00 UTC 2026{eol}", store_escape(&comment, false));
        let mut expected = BTreeMap::new();
        for (key, value) in &entries {
            let _ = write!(file, "{}={}{eol}", store_escape(key, true), store_escape(value, false));
            expected.insert(*key, show(value));
        }
        let read = read(file.as_bytes());
        prop_assert_eq!(read, Some(expected), "{:?}", file);
    }
}

// ---- the differential test against java.util.Properties -----------------------------------

/// xorshift64*: the corpus is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Keys of a real `fess_config.properties` (this project reads none of them).
const FESS_KEYS: [&str; 12] = [
    "crawler.document.max.size",
    "crawler.document.html.pruned.tags",
    "index.number_of_shards",
    "query.max.length",
    "app.cipher.key",
    "mail.from.name",
    "ldap.admin.enabled",
    "thumbnail.html.image.exclude.extensions",
    "sso.type",
    "online.help.supported.langs",
    "label.emoji",
    "page.docboost.max.fetch.size",
];

const VALUE_PIECES: [&str; 28] = [
    "80",
    "7",
    "0",
    "-3",
    "2147483648",
    "open",
    "ewma",
    "http://127.0.0.1:9200",
    " ",
    "  ",
    "\t",
    "é",
    "日本語",
    "x",
    "\\u00e9",
    "\\u0041",
    "\\uD83D\\uDE00",
    "\\uD83D",
    "\\uDE00z",
    "\\t",
    "\\\\",
    "\\=",
    "\\:",
    "#",
    "!",
    "=",
    ":",
    "a b",
];

fn value(rng: &mut Rng, eol: &str) -> String {
    let mut value = String::new();
    let pieces = if rng.chance(5) {
        60 + rng.below(200)
    } else {
        rng.below(6)
    };
    for _ in 0..pieces {
        value.push_str(rng.pick(&VALUE_PIECES));
        if rng.chance(8) {
            // A continuation, with the next line's leading whitespace.
            value.push('\\');
            value.push_str(eol);
            value.push_str(rng.pick(&["", " ", "    ", "\t"]));
        }
    }
    value
}

/// One Fess-like file: hundreds of keys, comment blocks, continuations, escapes, duplicates.
fn file(rng: &mut Rng) -> Vec<u8> {
    let eol = rng.pick(&["\n", "\r\n", "\r"]);
    let mut text = String::new();
    for _ in 0..(5 + rng.below(120)) {
        match rng.below(20) {
            0..=2 => {
                let _ = write!(
                    text,
                    "{}{} {}{eol}",
                    rng.pick(&["", "  "]),
                    rng.pick(&["#", "!"]),
                    rng.pick(&["Fess", "load \\", "a=b", "\\u00e9 é"])
                );
            }
            3 => text.push_str(eol),
            4 => {
                // A continuation that adds nothing, then a comment, then the entry.
                let _ = write!(text, "\\{eol}# c \\{eol}{}=42{eol}", rng.pick(&keys::ALL));
            }
            5..=10 => {
                let key = rng.pick(&keys::ALL);
                let separator = rng.pick(&["=", ":", " ", " = ", "\t:\t", "  "]);
                let _ = write!(
                    text,
                    "{}{key}{separator}{}{eol}",
                    rng.pick(&["", " ", "\t"]),
                    value(rng, eol)
                );
            }
            _ => {
                let key = rng.pick(&FESS_KEYS);
                let _ = write!(text, "{key}={}{eol}", value(rng, eol));
            }
        }
    }
    if rng.chance(2) {
        let _ = write!(text, "broken=\\u12G4{eol}");
    }
    if rng.chance(10) {
        // ISO-8859-1: every character within it becomes its byte (é is 0xE9, not UTF-8).
        text.chars()
            .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
            .collect()
    } else {
        text.into_bytes()
    }
}

/// Loads every file of a directory with `java.util.Properties` and prints each known key.
const DUMP_JAVA: &str = r#"
import java.io.*;
import java.nio.ByteBuffer;
import java.nio.charset.*;
import java.nio.file.*;
import java.util.*;

public class Dump {
    public static void main(String[] args) throws Exception {
        String[] keys = args[1].split(",");
        File[] files = new File(args[0]).listFiles();
        Arrays.sort(files);
        StringBuilder out = new StringBuilder();
        for (File file : files) {
            byte[] bytes = Files.readAllBytes(file.toPath());
            Properties properties = new Properties();
            try {
                CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT);
                try {
                    properties.load(new StringReader(utf8.decode(ByteBuffer.wrap(bytes)).toString()));
                } catch (CharacterCodingException e) {
                    properties.load(new ByteArrayInputStream(bytes)); // ISO-8859-1
                }
            } catch (IllegalArgumentException e) {
                out.append(file.getName()).append("\tERROR\n");
                continue;
            }
            for (String key : keys) {
                String value = properties.getProperty(key);
                if (value != null) {
                    out.append(file.getName()).append('\t').append(key).append('\t').append(show(value)).append('\n');
                }
            }
        }
        System.out.print(out);
    }

    static String show(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            if (c >= 0xD800 && c <= 0xDFFF) c = 0xFFFD;
            if (c >= ' ' && c <= '~' && c != '\\') out.append((char) c);
            else out.append("\\u{").append(Integer.toHexString(c)).append('}');
        }
        return out.toString();
    }
}
"#;

/// How many files the differential test generates.
const FILES: usize = 3_000;

#[test]
#[ignore = "needs Java 17 (javac and java on the PATH); .ci/run runs it with --ignored"]
fn java_util_properties_reads_every_known_key_the_same() {
    let dir = std::env::temp_dir().join(format!("java-properties-{}", std::process::id()));
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus dir");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut files = Vec::new();
    for i in 0..FILES {
        let bytes = file(&mut rng);
        let name = format!("f{i:05}.properties");
        std::fs::write(corpus.join(&name), &bytes).expect("write");
        files.push((name, bytes));
    }
    // Fess's own configuration too, when it is beside this checkout.
    let fess = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/fess_config.properties");
    if let Ok(bytes) = std::fs::read(&fess) {
        std::fs::write(corpus.join("fess_config.properties"), &bytes).expect("write");
        files.push(("fess_config.properties".into(), bytes));
    }

    std::fs::write(dir.join("Dump.java"), DUMP_JAVA).expect("Dump.java");
    let javac = Command::new("javac")
        .arg("-d")
        .arg(&dir)
        .arg(dir.join("Dump.java"))
        .status()
        .expect("javac (Java 17) on the PATH");
    assert!(javac.success(), "javac failed");
    let output = Command::new("java")
        .arg("-cp")
        .arg(&dir)
        .arg("Dump")
        .arg(&corpus)
        .arg(keys::ALL.join(","))
        .output()
        .expect("java on the PATH");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let java = String::from_utf8(output.stdout).expect("UTF-8");

    let mut by_file: BTreeMap<&str, Option<BTreeMap<&str, &str>>> = BTreeMap::new();
    for line in java.lines() {
        let mut fields = line.splitn(3, '\t');
        let (Some(name), Some(key)) = (fields.next(), fields.next()) else {
            panic!("odd line from Java: {line:?}");
        };
        if key == "ERROR" {
            by_file.insert(name, None);
        } else {
            by_file
                .entry(name)
                .or_insert_with(|| Some(BTreeMap::new()))
                .as_mut()
                .expect("not an error")
                .insert(key, fields.next().unwrap_or_default());
        }
    }
    let (mut compared, mut refused, mut latin1, mut cut) = (0, 0, 0, 0);
    for (name, bytes) in &files {
        let ours = read(bytes);
        let theirs = by_file
            .get(name.as_str())
            .cloned()
            .unwrap_or(Some(BTreeMap::new()));
        match (&ours, &theirs) {
            (None, None) => refused += 1,
            (Some(ours), Some(theirs)) => {
                assert_eq!(
                    ours.keys().collect::<Vec<_>>(),
                    theirs.keys().collect::<Vec<_>>(),
                    "{name}: the keys present"
                );
                for (key, value) in ours {
                    let java = theirs[key];
                    match value.strip_prefix("<cut>") {
                        Some(kept) => {
                            cut += 1;
                            assert!(
                                java.starts_with(kept) && java.len() > kept.len(),
                                "{name}: {key}"
                            );
                        }
                        None => assert_eq!(value, java, "{name}: {key}"),
                    }
                }
            }
            _ => panic!("{name}: the reader says {ours:?}, Java says {theirs:?}"),
        }
        compared += 1;
        if std::str::from_utf8(bytes).is_err() {
            latin1 += 1;
        }
    }
    println!(
        "java.util.Properties and the reader agree on {compared} files ({latin1} ISO-8859-1, \
         {refused} refused by both, {cut} values longer than the reader keeps)"
    );
    assert!(compared >= FILES);
    let _ = std::fs::remove_dir_all(&dir);
}
