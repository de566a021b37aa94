//! Which addresses WebFetch refuses to connect to without a rule that names the host: the
//! machine itself, the private networks around it and the cloud metadata services, which a
//! page the model was steered to must not be able to reach through cairn.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is closed to WebFetch; the words finish "… is {reason}".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosedAddress {
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, `100.64/10`, `fc00::/7`: a network behind the
    /// machine.
    Private,
    /// `169.254/16`, `fe80::/10`: the link the machine sits on.
    LinkLocal,
    /// A cloud provider's instance metadata service (`169.254.169.254`, `fd00:ec2::254`,
    /// `100.100.100.200`), which hands out credentials.
    Metadata,
    /// `0.0.0.0/8`, `::`, broadcast, multicast, documentation and reserved ranges: nothing
    /// a web page lives on.
    Unroutable,
}

impl ClosedAddress {
    /// What the address is, for the refusal.
    pub fn describe(self) -> &'static str {
        match self {
            ClosedAddress::Loopback => "a loopback address (this machine)",
            ClosedAddress::Private => "a private network address",
            ClosedAddress::LinkLocal => "a link-local address",
            ClosedAddress::Metadata => "a cloud metadata endpoint",
            ClosedAddress::Unroutable => "not a public address",
        }
    }
}

/// Why `address` is closed to WebFetch, or `None` for a public address.
pub fn closed_address(address: IpAddr) -> Option<ClosedAddress> {
    match address {
        IpAddr::V4(v4) => closed_v4(v4),
        IpAddr::V6(v6) => closed_v6(v6),
    }
}

fn closed_v4(address: Ipv4Addr) -> Option<ClosedAddress> {
    let [a, b, c, _] = address.octets();
    if address == Ipv4Addr::new(169, 254, 169, 254) || address == Ipv4Addr::new(100, 100, 100, 200)
    {
        return Some(ClosedAddress::Metadata);
    }
    if address.is_loopback() {
        return Some(ClosedAddress::Loopback);
    }
    // 100.64/10 is carrier-grade NAT, a network behind the machine like 10/8.
    if address.is_private() || (a == 100 && (64..128).contains(&b)) {
        return Some(ClosedAddress::Private);
    }
    if address.is_link_local() {
        return Some(ClosedAddress::LinkLocal);
    }
    let reserved = a == 0
        || a >= 240
        || address.is_multicast()
        || address.is_documentation()
        // 192.0.0/24 (protocol assignments) and 198.18/15 (benchmarking).
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19));
    reserved.then_some(ClosedAddress::Unroutable)
}

fn closed_v6(address: Ipv6Addr) -> Option<ClosedAddress> {
    // An IPv4 address written as IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4 one.
    if let Some(v4) = address.to_ipv4_mapped() {
        return closed_v4(v4);
    }
    let segments = address.segments();
    if segments == [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254] {
        return Some(ClosedAddress::Metadata);
    }
    if address.is_loopback() {
        return Some(ClosedAddress::Loopback);
    }
    if segments[0] & 0xfe00 == 0xfc00 {
        return Some(ClosedAddress::Private);
    }
    if segments[0] & 0xffc0 == 0xfe80 {
        return Some(ClosedAddress::LinkLocal);
    }
    // `::`, multicast, the NAT64 prefix onto any IPv4 address, and documentation.
    let reserved = address.is_unspecified()
        || address.is_multicast()
        || segments[..2] == [0x64, 0xff9b]
        || segments[..2] == [0x2001, 0x0db8];
    reserved.then_some(ClosedAddress::Unroutable)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn judged(text: &str) -> Option<ClosedAddress> {
        let address: IpAddr = text
            .parse()
            .unwrap_or_else(|_| panic!("{text} is an address"));
        closed_address(address)
    }

    #[test]
    fn private_link_local_loopback_and_metadata_addresses_are_closed() {
        use ClosedAddress::*;
        let cases = [
            ("10.1.2.3", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("100.64.0.1", Some(Private)),
            ("169.254.10.1", Some(LinkLocal)),
            ("169.254.169.254", Some(Metadata)),
            ("100.100.100.200", Some(Metadata)),
            ("127.0.0.1", Some(Loopback)),
            ("127.8.9.10", Some(Loopback)),
            ("0.0.0.0", Some(Unroutable)),
            ("255.255.255.255", Some(Unroutable)),
            ("::1", Some(Loopback)),
            ("::", Some(Unroutable)),
            ("fc00::1", Some(Private)),
            ("fd12:3456::1", Some(Private)),
            ("fe80::1", Some(LinkLocal)),
            ("fd00:ec2::254", Some(Metadata)),
            ("::ffff:192.168.0.1", Some(Private)),
            ("::ffff:169.254.169.254", Some(Metadata)),
            ("64:ff9b::a00:1", Some(Unroutable)),
        ];
        for (address, expected) in cases {
            assert_eq!(judged(address), expected, "{address}");
        }
    }

    #[test]
    fn public_addresses_are_open() {
        for address in [
            "93.184.215.14",
            "172.32.0.1",
            "172.15.255.255",
            "100.128.0.1",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
        ] {
            assert_eq!(judged(address), None, "{address}");
        }
    }
}
