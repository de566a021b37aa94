#![allow(clippy::print_stdout)]
fn main() {
    let t = std::time::Instant::now();
    let config = cairn_llm::AnthropicConfig::new(cairn_llm::Credential::ApiKey("k".into()));
    let c = cairn_llm::AnthropicClient::new(config);
    println!("new: {:?} ok={}", t.elapsed(), c.is_ok());
    let t = std::time::Instant::now();
    let config = cairn_llm::AnthropicConfig::new(cairn_llm::Credential::ApiKey("k".into()));
    let c = cairn_llm::AnthropicClient::new(config);
    println!("second new: {:?} ok={}", t.elapsed(), c.is_ok());
}
