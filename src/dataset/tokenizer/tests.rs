//! Tests of token counting by each kind of tokenizer (`tricky_ascii` is shared with `join_delta.rs`).

use super::*;

/// The pattern that cuts `text` into pre-tokens if it may take the ASCII path.
fn ascii_pattern(t: &Tokenizer, text: &str) -> Option<Pattern> {
    t.ascii_path.as_ref().filter(|path| path.pieces_between_added(text).is_some()).map(|path| path.pattern)
}

#[test]
fn builtin_tokenizer_counts_gpt2_tokens() {
    let t = Tokenizer::builtin();
    // GPT-2: "Hello" " world" "!" are three tokens.
    assert_eq!(t.count("Hello world!"), 3);
    assert_eq!(t.count(""), 0);
    let ids = t.encode(" the quick brown fox");
    assert_eq!(t.decode(&ids), " the quick brown fox");
}

/// ASCII text that stresses the pre-tokenizer: contractions, digit runs, punctuation,
/// every kind of whitespace, control bytes and the special token.
pub(crate) fn tricky_ascii(rng: &mut crate::rng::SeededRng, len: usize) -> String {
    const PARTS: [&str; 28] = [
        " the",
        "HTTPServer",
        " DON'T",
        "/\n/",
        "<|endofprompt|>",
        "Hello",
        "'s",
        "'t",
        "'re",
        "'ve",
        "'m",
        "'ll",
        "'d",
        "'S",
        " 123",
        "4",
        "!?",
        " ...",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\t",
        "\x0b\x0c",
        "\x01",
        "\x7f",
        "<|endoftext|>",
        "don't",
    ];
    (0..len).map(|_| PARTS[rng.below(PARTS.len() as u64) as usize]).collect()
}

#[test]
fn the_builtin_word_by_word_count_and_ids_equal_the_whole_encoding() {
    let t = Tokenizer::builtin();
    let mut rng = crate::rng::SeededRng::new(7);
    for len in (0..400).map(|i| i % 40) {
        let text = tricky_ascii(&mut rng, len);
        assert_eq!(t.encode(&text), t.encode_whole(&text), "{text:?}");
        assert_eq!(t.count(&text), t.encode_whole(&text).len(), "{text:?}");
    }
    let prose = &crate::dataset::corpus::shakespeare()[..20_000];
    assert_eq!(ascii_pattern(&t, prose), Some(Pattern::Gpt2));
    assert_eq!(t.encode(prose), t.encode_whole(prose));
    assert_eq!(t.count(prose), t.encode_whole(prose).len());
    assert_eq!(t.count("naïve café 東京 it's"), t.encode("naïve café 東京 it's").len(), "non-ASCII text");
}

#[test]
fn ascii_text_with_added_tokens_counts_between_them_as_the_whole_encoding_does() {
    let (stripping, _stripping_dir) = fixture_changed(|json| {
        let next_id = json["model"]["vocab"].as_object().unwrap().len();
        json["added_tokens"].as_array_mut().unwrap().push(serde_json::json!({ "id": next_id,
            "content": "<|sep|>", "single_word": false, "lstrip": true, "rstrip": true, "normalized": false,
            "special": true }));
    });
    let (plain, _plain_dir) = fixture_split_by(Pattern::LLAMA3_REGEX, serde_json::Value::Null);
    let texts = [
        "<|endoftext|>Once upon a time<|endoftext|> there were  two<|endoftext|>",
        "<|endoftext|><|endoftext|>\n  <|endoftext|>x",
        "a <|endoftext|> b <|endofprompt|> c",
        "a <|eot_id|> b <|eot_id|>c",
        "a <|sep|> b <|sep|>",
        "no added token at all, it's 123",
    ];
    let tokenizers =
        [Tokenizer::builtin(), Tokenizer::encoding("cl100k_base").unwrap(), Tokenizer::encoding("o200k_base").unwrap()];
    for t in tokenizers.iter().chain([&stripping, &plain]) {
        for text in texts {
            assert_eq!(t.encode(text), t.encode_whole(text), "{} on {text:?}", t.name());
            assert_eq!(t.count(text), t.encode_whole(text).len(), "{} on {text:?}", t.name());
        }
    }
    let builtin = &tokenizers[0];
    let blocks = format!("<|endoftext|>{}", &crate::dataset::corpus::shakespeare()[..3_000]).repeat(4);
    assert_eq!(builtin.count(&blocks), builtin.encode_whole(&blocks).len(), "a trace's blocks");
    assert_eq!(builtin.encode(&blocks), builtin.encode_whole(&blocks), "a trace's blocks");
    let fresh = Tokenizer::builtin();
    fresh.count(&blocks);
    fresh.encode(&blocks);
    assert!(
        matches!(&fresh.kind, Kind::Builtin { pipeline, .. } if pipeline.get().is_none()),
        "a trace's blocks need no pipeline: its load would fall on a run's first request"
    );
}

#[test]
fn ids_by_chunks_are_the_whole_encodings_and_repeat_from_memory() {
    let mut rng = crate::rng::SeededRng::new(11);
    let mut texts: Vec<String> = (0..200).map(|i| tricky_ascii(&mut rng, i % 30)).collect();
    texts.extend(
        [
            "Hello there, it's 2024!  Tabs\tand\nnew lines \u{3000}wide  ümlaut café",
            "   leading spaces and trailing ones   ",
            "a  \u{3000}x \x0by  \u{a0}z",
            "x  <|endoftext|>  <|endoftext|> <|endoftext|>y",
            " the the the question 7",
        ]
        .map(String::from),
    );
    for tokenizer in [Tokenizer::builtin(), Tokenizer::encoding("cl100k_base").unwrap()] {
        for text in &texts {
            for _ in 0..2 {
                let mut ids = vec![9];
                tokenizer.extend_ids_by_chunks(text, &mut ids);
                assert_eq!(ids[1..], tokenizer.encode_whole(text), "{} {text:?}", tokenizer.name());
            }
        }
    }
}

#[test]
fn tiktoken_encodings_count_as_tiktoken_does_word_by_word_too() {
    // Counts and ids from Python's tiktoken (what AIPerf counts with), allowed_special="all".
    let texts =
        ["Hello world!", "HTTPServer isn't DON'T 12345 a.b/\n/x", "naïve café 東京 it's", "done<|endoftext|>next"];
    let known: [(&str, [usize; 4]); 3] =
        [("o200k_base", [3, 11, 6, 3]), ("cl100k_base", [3, 13, 9, 3]), ("r50k_base", [3, 17, 10, 3])];
    for (name, counts) in known {
        let t = Tokenizer::load(&TokenizerSpec::Encoding { name: name.into() }).unwrap();
        assert_eq!(texts.map(|text| t.count(text)), counts, "{name}");
    }
    let o200k = Tokenizer::load(&TokenizerSpec::Encoding { name: "o200k_base".into() }).unwrap();
    let ids = [17893, 6444, 12471, 153384, 220, 7633, 2548, 261, 1292, 66186, 87];
    assert_eq!(o200k.encode(texts[1]), ids);
    assert_eq!(o200k.decode(&ids), texts[1]);
    assert_eq!(o200k.name(), "o200k_base");

    let mut rng = crate::rng::SeededRng::new(5);
    let prose = &crate::dataset::corpus::shakespeare()[..20_000];
    for name in crate::dataset::tiktoken_encodings::names() {
        let t = Tokenizer::load(&TokenizerSpec::Encoding { name: name.into() }).unwrap();
        for len in (0..300).map(|i| i % 40) {
            let text = tricky_ascii(&mut rng, len);
            assert_eq!(t.encode(&text), t.encode_whole(&text), "{name} on {text:?}");
            assert_eq!(t.count(&text), t.encode_whole(&text).len(), "{name} on {text:?}");
        }
        assert!(ascii_pattern(&t, prose).is_some());
        assert_eq!(t.count(prose), t.encode_whole(prose).len(), "{name} on prose");
    }
}

#[test]
fn a_text_the_tiktoken_regex_gives_up_on_is_encoded_by_halves() {
    let bpe = &crate::dataset::tiktoken_encodings::encoding("o200k_base").unwrap().bpe;
    let spaces = " ".repeat(1_200_000);
    assert!(bpe.encode(&spaces, &HashSet::new()).is_err(), "the regex engine no longer gives up here");
    let ids = encode_tiktoken(bpe, &HashSet::new(), &spaces);
    assert_eq!(bpe.decode_bytes(&ids).unwrap().len(), spaces.len());
}

#[test]
fn the_builtin_bpe_merges_long_words_as_the_pipeline_does() {
    let t = Tokenizer::builtin();
    let mut rng = crate::rng::SeededRng::new(11);
    // Few letters: the same pairs recur in a word, so the order among equal ranks matters.
    const LETTERS: &[u8] = b"etaoin";
    for len in [1, 2, 3, 50, 1_000, 5_000] {
        let word: String = (0..len).map(|_| char::from(LETTERS[rng.below(LETTERS.len() as u64) as usize])).collect();
        assert_eq!(t.encode(&word), t.encode_whole(&word), "{len} letters");
    }
    for word in ["aaaaaaaaaaaaaaaaaaaaaaaaa", &"abcdefgh".repeat(8_000), &"1234567890".repeat(300), "!!!!!!!!!!!!!!!"] {
        assert_eq!(t.encode(word), t.encode_whole(word), "{}…", &word[..10.min(word.len())]);
    }
}

#[test]
fn the_builtin_decoding_equals_the_pipelines() {
    let t = Tokenizer::builtin();
    let pipeline = t.pipeline().unwrap();
    let mut rng = crate::rng::SeededRng::new(5);
    for len in (0..300).map(|i| i % 30) {
        // Any ids: byte tokens that split a UTF-8 character, the special token, the last id.
        let ids: Vec<u32> = (0..len).map(|_| rng.below(50_257) as u32).collect();
        assert_eq!(t.decode(&ids), pipeline.decode(&ids, false).unwrap(), "{ids:?}");
    }
    let split_character = t.encode_whole("é東");
    assert_eq!(t.decode(&split_character[..1]), pipeline.decode(&split_character[..1], false).unwrap());
    assert_eq!(t.decode(&[50_256]), "<|endoftext|>");
}

/// The test tokenizer file, its JSON changed by `change`, loaded from a file of its own.
fn fixture_changed(change: impl FnOnce(&mut serde_json::Value)) -> (Tokenizer, tempfile::TempDir) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");
    let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    change(&mut json);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokenizer.json");
    std::fs::write(&path, json.to_string()).unwrap();
    (Tokenizer::from_path(&path).unwrap(), dir)
}

#[test]
fn the_block_separator_is_the_configured_bos_else_eos_when_it_is_one_token() {
    let with_config = |config: &str| {
        let (_, dir) = fixture_changed(|_| {});
        std::fs::write(dir.path().join("tokenizer_config.json"), config).unwrap();
        let tokenizer = Tokenizer::from_path(&dir.path().join("tokenizer.json")).unwrap();
        tokenizer.block_separator().map(str::to_string)
    };
    // The fixture's one added token is <|endoftext|>.
    assert_eq!(with_config(r#"{"bos_token": "<|endoftext|>", "eos_token": "</s>"}"#).as_deref(), Some("<|endoftext|>"));
    assert_eq!(
        with_config(r#"{"bos_token": null, "eos_token": {"content": "<|endoftext|>"}}"#).as_deref(),
        Some("<|endoftext|>")
    );
    assert_eq!(with_config(r#"{"bos_token": "<s>"}"#), None, "not a token of this tokenizer");
    assert_eq!(with_config("not json"), None);
    assert_eq!(fixture_changed(|_| {}).0.block_separator(), None, "no config beside the file");
    assert_eq!(Tokenizer::builtin().block_separator(), Some("<|endoftext|>"));
    let o200k = Tokenizer::load(&TokenizerSpec::Encoding { name: "o200k_base".into() }).unwrap();
    assert_eq!(o200k.block_separator(), Some("<|endoftext|>"));
}

#[test]
fn counts_from_a_pipelines_pre_tokens_equal_its_whole_encodings() {
    let (plain, _plain_dir) = fixture_changed(|_| {});
    // A Llama-3-style pipeline: a normalizer, a regex split before the byte-level step,
    // and added tokens that strip the spaces around them or match after normalizing.
    let (llama_like, _llama_dir) = fixture_changed(|json| {
        json["normalizer"] =
            serde_json::json!({ "type": "Sequence", "normalizers": [{ "type": "NFC" }, { "type": "Lowercase" }] });
        json["pre_tokenizer"] = serde_json::json!({ "type": "Sequence", "pretokenizers": [
            { "type": "Split", "behavior": "Isolated", "invert": false, "pattern": { "Regex":
                r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+" } },
            { "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false },
        ]});
        let next_id = json["model"]["vocab"].as_object().unwrap().len();
        let added = json["added_tokens"].as_array_mut().unwrap();
        for (offset, (content, strip, normalized)) in
            [("<tool>", true, false), ("end of turn", false, true)].into_iter().enumerate()
        {
            added.push(serde_json::json!({ "id": next_id + offset, "content": content, "single_word": false,
                "lstrip": strip, "rstrip": strip, "normalized": normalized, "special": !normalized }));
        }
    });
    let gpt2_file =
        Tokenizer::from_path(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/tokenizers/gpt2.tokenizer.json")))
            .unwrap();
    let builtin = Tokenizer::builtin();
    let mut rng = crate::rng::SeededRng::new(3);
    for len in (0..300).map(|i| i % 30) {
        let ascii = tricky_ascii(&mut rng, len);
        let text = format!("{ascii} <tool> naïve Café, 東京 END OF TURN {ascii}\u{0301}x ");
        for t in [&plain, &llama_like, &gpt2_file, &builtin] {
            let whole = t.encode_whole(&text).len();
            let from_pre_tokens = split_counts::count(t.pipeline().unwrap(), &text, &t.pipeline_words);
            assert_eq!(from_pre_tokens, Some(whole), "{} on {text:?}", t.name());
            assert_eq!((t.count(&text), t.count(&text)), (whole, whole), "{} on {text:?}", t.name());
        }
    }
    let (truncating, _truncating_dir) = fixture_changed(|json| {
        json["truncation"] =
            serde_json::json!({ "direction": "Right", "max_length": 5, "strategy": "LongestFirst", "stride": 0 });
    });
    let text = "a text of many more than five tokens, which the pipeline cuts";
    assert_eq!(split_counts::count(truncating.pipeline().unwrap(), text, &truncating.pipeline_words), None);
    assert_eq!(truncating.count(text), 5, "a truncating pipeline counts as it encodes");
}

/// The fixture with `regex` split off before its byte-level step (as Llama 3's and Qwen
/// 2's files have it), `normalizer` and one more added token.
fn fixture_split_by(regex: &str, normalizer: serde_json::Value) -> (Tokenizer, tempfile::TempDir) {
    fixture_changed(|json| {
        json["normalizer"] = normalizer;
        json["pre_tokenizer"] = serde_json::json!({ "type": "Sequence", "pretokenizers": [
            { "type": "Split", "behavior": "Isolated", "invert": false, "pattern": { "Regex": regex } },
            { "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false },
        ]});
        let next_id = json["model"]["vocab"].as_object().unwrap().len();
        json["added_tokens"].as_array_mut().unwrap().push(serde_json::json!({ "id": next_id, "content": "<|eot_id|>",
            "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true }));
    })
}

#[test]
fn ascii_text_under_llama3_qwen2_and_gpt2_files_goes_word_by_word_to_the_same_ids() {
    let (llama3, _llama3_dir) = fixture_split_by(Pattern::LLAMA3_REGEX, serde_json::Value::Null);
    let (qwen2, _qwen2_dir) = fixture_split_by(Pattern::QWEN2_REGEX, serde_json::json!({ "type": "NFC" }));
    let (plain, _plain_dir) = fixture_changed(|_| {});
    let (lowercased, _lowercased_dir) =
        fixture_split_by(Pattern::LLAMA3_REGEX, serde_json::json!({ "type": "Lowercase" }));
    let mut rng = crate::rng::SeededRng::new(23);
    let prose = &crate::dataset::corpus::shakespeare()[..10_000];
    for (t, pattern) in [
        (&llama3, Some(Pattern::Llama3)),
        (&qwen2, Some(Pattern::Qwen2)),
        (&plain, Some(Pattern::Gpt2)),
        (&lowercased, None),
    ] {
        assert_eq!(ascii_pattern(t, prose), pattern, "{}", t.name());
        let texts = (0..200).map(|i| tricky_ascii(&mut rng, i % 30).replace("<|endoftext|>", "<|eot_id|>"));
        for text in texts.chain([prose.to_string(), "12345 digits, 'CAPS'\r\n\tdone<|eot_id|> naïve".to_string()]) {
            let whole = t.encode_whole(&text);
            assert_eq!(t.encode(&text), whole, "{} on {text:?}", t.name());
            assert_eq!((t.count(&text), t.count(&text)), (whole.len(), whole.len()), "{} on {text:?}", t.name());
        }
    }
    assert_eq!(ascii_pattern(&llama3, "a <|eot_id|> b"), Some(Pattern::Llama3), "an added token splits off");
    assert_eq!(ascii_pattern(&llama3, "a <|eot_id|> b <|endoftext|>"), None, "two kinds take the pipeline");
}

#[test]
fn a_missing_tokenizer_file_is_a_clear_error() {
    let err = Tokenizer::from_path(Path::new("/nonexistent/tok.json")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/tok.json"), "{err}");
}

#[test]
fn pieces_end_before_whitespace_or_at_a_char_boundary_and_cover_the_text() {
    let text = "ab cd éé ffff";
    let cut: Vec<&str> = pieces(text, 5).collect();
    assert_eq!(cut, vec!["ab", " cd", " éé", " ffff"]);
    assert_eq!(cut.concat(), text);
    let no_spaces: Vec<&str> = pieces("ééééé", 5).collect();
    assert_eq!(no_spaces, vec!["éé", "éé", "é"]);
    assert_eq!(pieces("", 5).count(), 0);
}

#[test]
fn long_text_is_counted_in_pieces_exactly_when_it_has_spaces_and_nearly_without() {
    let t = Tokenizer::builtin();
    let words = "the quick brown fox jumps over the lazy dog ".repeat(4000);
    assert!(words.len() > 2 * COUNT_PIECE_BYTES);
    assert_eq!(t.count(&words), t.encode(&words).len());
    let no_spaces = "abcdefgh".repeat(20_000);
    let whole = t.encode(&no_spaces).len();
    let pieces = no_spaces.len().div_ceil(COUNT_PIECE_BYTES);
    assert!(t.count(&no_spaces).abs_diff(whole) <= pieces, "{} vs {whole}", t.count(&no_spaces));
}
