//! Datasets: what is sent. Synthetic prompts and the tokenizer that counts them.

pub mod tokenizer;
