//! WebFetch's cache: a page's Markdown kept for 15 minutes by URL, so that asking a second
//! question about the same page does not fetch it again.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a fetched page is reused, as in Claude Code.
pub const CACHE_TTL: Duration = Duration::from_secs(15 * 60);

/// The most pages kept; the oldest goes first.
const MAX_PAGES: usize = 64;

/// A page as cached: the URL it finally came from and its Markdown.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedPage {
    /// Where the page was fetched from, after same-host redirects.
    pub url: String,
    /// The page as Markdown, before it is cut to fit.
    pub markdown: String,
}

/// Pages by the URL they were asked for.
#[derive(Debug)]
pub struct PageCache {
    ttl: Duration,
    /// Each page with when it was stored and its place in the order of storing.
    pages: Mutex<HashMap<String, (Instant, u64, CachedPage)>>,
    stored: std::sync::atomic::AtomicU64,
}

impl PageCache {
    /// A cache whose pages last `ttl`.
    pub fn new(ttl: Duration) -> PageCache {
        PageCache {
            ttl,
            pages: Mutex::new(HashMap::new()),
            stored: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The page cached for `url`, if it is younger than the cache's time to live.
    pub fn get(&self, url: &str) -> Option<CachedPage> {
        let mut pages = self
            .pages
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let ttl = self.ttl;
        pages.retain(|_, (stored, _, _)| stored.elapsed() < ttl);
        pages.get(url).map(|(_, _, page)| page.clone())
    }

    /// Keeps `page` for `url`.
    pub fn put(&self, url: &str, page: CachedPage) {
        let mut pages = self
            .pages
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if pages.len() >= MAX_PAGES
            && let Some(oldest) = pages
                .iter()
                .min_by_key(|(_, (_, order, _))| *order)
                .map(|(key, _)| key.clone())
        {
            pages.remove(&oldest);
        }
        let order = self
            .stored
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        pages.insert(url.to_string(), (Instant::now(), order, page));
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn page(markdown: &str) -> CachedPage {
        CachedPage {
            url: "https://example.com/".into(),
            markdown: markdown.into(),
        }
    }

    #[test]
    fn a_page_is_reused_until_it_expires() {
        let cache = PageCache::new(CACHE_TTL);
        cache.put("https://example.com/", page("# A"));
        assert_eq!(cache.get("https://example.com/"), Some(page("# A")));
        assert_eq!(cache.get("https://example.com/other"), None);
        let expired = PageCache::new(Duration::ZERO);
        expired.put("https://example.com/", page("# A"));
        assert_eq!(expired.get("https://example.com/"), None);
    }

    #[test]
    fn the_oldest_page_goes_when_the_cache_is_full() {
        let cache = PageCache::new(CACHE_TTL);
        for n in 0..=MAX_PAGES {
            cache.put(&format!("https://example.com/{n}"), page(&n.to_string()));
        }
        assert_eq!(cache.get("https://example.com/0"), None);
        assert_eq!(cache.get("https://example.com/1"), Some(page("1")));
    }
}
