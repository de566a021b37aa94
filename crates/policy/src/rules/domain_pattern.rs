//! The specifier of a WebFetch rule: `WebFetch(domain:example.com)`,
//! `WebFetch(domain:*.example.com)`.

/// The hosts a WebFetch rule names.
///
/// As in Claude Code, `domain:example.com` is that host exactly (not `www.example.com`), and
/// `domain:*.example.com` is any subdomain of it at any depth (`api.example.com`,
/// `a.b.example.com`) but not `example.com` itself. Hosts compare in their canonical form
/// (lowercase, international names in punycode, no trailing dot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DomainPattern {
    Exact(String),
    Subdomains(String),
}

impl DomainPattern {
    /// Reads a WebFetch specifier, which must be `domain:<host>` or `domain:*.<host>`.
    pub(crate) fn parse(spec: &str) -> Result<DomainPattern, String> {
        let Some(domain) = spec.strip_prefix("domain:") else {
            return Err(
                "WebFetch rules take `domain:<host>`, e.g. `WebFetch(domain:example.com)`"
                    .to_owned(),
            );
        };
        let domain = domain.trim();
        let (pattern, host): (fn(String) -> DomainPattern, &str) = match domain.strip_prefix("*.") {
            Some(parent) => (DomainPattern::Subdomains, parent),
            None => (DomainPattern::Exact, domain),
        };
        canonical_host(host).map(pattern).ok_or_else(|| {
            format!("`{domain}` is not a host name; write e.g. `domain:example.com`")
        })
    }

    /// Whether a canonical host (from [`host_of_url`]) is one of the pattern's.
    pub(crate) fn matches(&self, host: &str) -> bool {
        match self {
            DomainPattern::Exact(exact) => host == exact,
            DomainPattern::Subdomains(parent) => host
                .strip_suffix(parent.as_str())
                .and_then(|sub| sub.strip_suffix('.'))
                .is_some_and(|sub| !sub.is_empty()),
        }
    }
}

/// The canonical host a URL points at, as the fetch would connect to it.
pub(crate) fn host_of_url(url: &str) -> Option<String> {
    let url = url::Url::parse(url.trim()).ok()?;
    let host = url.host_str()?;
    Some(host.trim_end_matches('.').to_owned())
}

fn canonical_host(host: &str) -> Option<String> {
    if host.is_empty() || host.contains(['/', ':', '*', '@', ' ']) {
        return None;
    }
    let parsed = url::Host::parse(host).ok()?;
    Some(parsed.to_string().trim_end_matches('.').to_owned())
}

#[cfg(test)]
mod tests {
    use super::{DomainPattern, host_of_url};

    #[test]
    fn hosts_are_canonical() {
        assert_eq!(
            DomainPattern::parse("domain:Example.COM."),
            Ok(DomainPattern::Exact("example.com".to_owned()))
        );
        assert_eq!(
            host_of_url("https://user@API.Example.com:8443/x?y"),
            Some("api.example.com".to_owned())
        );
    }
}
