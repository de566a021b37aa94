//! Commands that use the network: which ones do (and for `npm`, `pip`, `cargo`…, which
//! subcommands), and what `curl`, `wget`, `scp` and `rsync` read and write locally.

use super::classify::{Analyzer, Site};
use super::links::{self, Access};
use super::options::{Args, OptionSpec, parse_args};
use super::word::Word;

/// Judges `curl`, `wget`, `scp` and `rsync`; returns whether `name` was one of them.
pub(crate) fn judge(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) -> bool {
    match name {
        "curl" => curl(an, args, site),
        "wget" => wget(an, args, site),
        "scp" | "rsync" => transfer(an, name, args, site),
        _ => return false,
    }
    true
}

fn curl(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    const WRITES: &[&str] = &[
        "-o",
        "--output",
        "-c",
        "--cookie-jar",
        "-D",
        "--dump-header",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--output-dir",
        "--etag-save",
        "--hsts",
        "--alt-svc",
    ];
    const READS: &[&str] = &[
        "-T",
        "--upload-file",
        "-K",
        "--config",
        "--cacert",
        "--cert",
        "--key",
        "-b",
        "--cookie",
        "--netrc-file",
    ];
    const DATA: &[&str] = &[
        "-d",
        "--data",
        "--data-binary",
        "--data-ascii",
        "--data-urlencode",
        "--json",
        "-F",
        "--form",
    ];
    let mut with_value: Vec<&str> = [WRITES, READS, DATA].concat();
    with_value.extend([
        "--data-raw",
        "--form-string",
        "-H",
        "--header",
        "-X",
        "--request",
        "-u",
        "--user",
        "-A",
        "--user-agent",
        "-e",
        "--referer",
        "--url",
        "-x",
        "--proxy",
        "-m",
        "--max-time",
        "--connect-timeout",
        "-w",
        "--write-out",
        "-r",
        "--range",
        "--retry",
        "-E",
        "--resolve",
        "--limit-rate",
        "-y",
        "-Y",
        "-z",
        "--time-cond",
        "-C",
        "--continue-at",
        "--variable",
        "--max-redirs",
        "--retry-delay",
        "--retry-max-time",
        "--proto",
        "--proto-redir",
        "--interface",
        "--dns-servers",
        "--expect100-timeout",
        "--oauth2-bearer",
        "--proxy-user",
    ]);
    let parsed = parse_args(
        args,
        OptionSpec {
            with_value: &with_value,
            stop_at_operand: false,
        },
    );
    for file in parsed.values(WRITES) {
        an.write_path(file, site);
    }
    for file in parsed.values(READS) {
        // `-b name=value` is a cookie, not a file.
        if !file.literal_prefix().contains('=') {
            an.read_path(file, site);
        }
    }
    for data in parsed.values(DATA) {
        if let Some(file) = uploaded_file(data) {
            an.read_path(&file, site);
        }
    }
    if parsed.has(&[
        "-O",
        "--remote-name",
        "--remote-name-all",
        "-J",
        "--remote-header-name",
    ]) {
        an.needs_approval("curl -O saves the download in the current directory");
    }
}

/// The file in `@file` or `name=@file` (or `<file`) data arguments.
fn uploaded_file(data: &Word) -> Option<Word> {
    let prefix = data.literal_prefix();
    let at = prefix.find(['@', '<'])?;
    data.without_prefix(at + 1)
}

fn wget(an: &mut Analyzer, args: &[Word], site: Site<'_>) {
    const WRITES: &[&str] = &[
        "-O",
        "--output-document",
        "-o",
        "--output-file",
        "-a",
        "--append-output",
        "-P",
        "--directory-prefix",
        "--save-cookies",
    ];
    const READS: &[&str] = &[
        "-i",
        "--input-file",
        "--post-file",
        "--body-file",
        "--load-cookies",
        "--ca-certificate",
        "--certificate",
        "--private-key",
        "--config",
    ];
    let mut with_value: Vec<&str> = [WRITES, READS].concat();
    with_value.extend([
        "-t",
        "--tries",
        "-T",
        "--timeout",
        "-w",
        "--wait",
        "-U",
        "--user-agent",
        "--header",
        "--post-data",
        "--method",
        "--body-data",
        "-l",
        "--level",
        "-A",
        "--accept",
        "-R",
        "--reject",
        "-D",
        "--domains",
        "-e",
        "--execute",
        "--user",
        "--password",
        "-Q",
        "--quota",
        "--limit-rate",
    ]);
    let parsed = parse_args(
        args,
        OptionSpec {
            with_value: &with_value,
            stop_at_operand: false,
        },
    );
    for file in parsed.values(WRITES) {
        an.write_path(file, site);
    }
    for file in parsed.values(READS) {
        an.read_path(file, site);
    }
    if !parsed.has(&["-O", "--output-document", "--spider"]) {
        an.needs_approval("wget saves the download in the current directory");
    }
}

/// `scp` and `rsync`: local sources are read, a local destination is written.
fn transfer(an: &mut Analyzer, name: &str, args: &[Word], site: Site<'_>) {
    let parsed: Args = parse_args(
        args,
        OptionSpec {
            with_value: &[
                "-e",
                "--rsh",
                "-i",
                "-F",
                "-P",
                "-o",
                "-c",
                "-l",
                "-S",
                "-J",
                "--exclude",
                "--include",
                "--exclude-from",
                "--include-from",
                "--files-from",
                "--filter",
                "-f",
                "--rsync-path",
                "--port",
                "--password-file",
                "--log-file",
                "--backup-dir",
                "--partial-dir",
                "--temp-dir",
                "-T",
                "--chmod",
                "--chown",
                "--timeout",
            ],
            stop_at_operand: false,
        },
    );
    if parsed.has(&["-e", "--rsh", "--rsync-path"]) {
        an.needs_approval(format!("`{name} -e` runs another program"));
    }
    an.not_read_only(name);
    let removes = parsed.options.iter().find(|option| {
        option.name.starts_with("--delete") || option.name == "--remove-source-files"
    });
    if let Some(option) = removes
        && name == "rsync"
    {
        an.destructive(format!(
            "rsync {} removes files the copy does not keep",
            option.name
        ));
    }
    if let Some((destination, sources)) = parsed.operands.split_last() {
        let local: Vec<Word> = sources
            .iter()
            .filter(|word| !is_remote(word))
            .cloned()
            .collect();
        for source in &local {
            an.read_path(source, site);
        }
        if !is_remote(destination) {
            an.write_path(destination, site);
        }
        let follows = parsed.has(&["-L", "--copy-links"])
            || (name == "rsync" && parsed.has(&["-k", "--copy-dirlinks"]))
            || (name == "scp" && parsed.has(&["-r"]));
        if follows {
            links::follow(
                an,
                &format!("{name} (following links)"),
                &local,
                site,
                Access::Reads,
            );
        }
    }
}

fn is_remote(word: &Word) -> bool {
    let prefix = word.literal_prefix();
    prefix.contains("://")
        || prefix
            .split('/')
            .next()
            .is_some_and(|head| head.contains(':'))
}

/// Whether (and as what) a command uses the network.
pub(crate) fn network_use(name: &str, args: &[Word]) -> Option<String> {
    const ALWAYS: &[&str] = &[
        "curl",
        "wget",
        "ssh",
        "scp",
        "sftp",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "telnet",
        "ftp",
        "ping",
        "ping6",
        "dig",
        "nslookup",
        "host",
        "whois",
        "traceroute",
        "tracepath",
        "mtr",
        "nmap",
        "http",
        "https",
        "xh",
        "aria2c",
        "axel",
        "lynx",
        "w3m",
        "links",
        "elinks",
        "gh",
        "aws",
        "gcloud",
        "gsutil",
        "az",
        "kubectl",
        "helm",
        "heroku",
        "vercel",
        "netlify",
        "flyctl",
        "doctl",
        "rclone",
        "s3cmd",
        "mosh",
        "ssh-copy-id",
        "fetch",
        "lwp-request",
        "npx",
        "pnpx",
        "bunx",
        "uvx",
        "websocat",
        "grpcurl",
    ];
    if ALWAYS.contains(&name) {
        return Some(name.to_owned());
    }
    let literals: Vec<String> = args.iter().filter_map(Word::literal).collect();
    let operands: Vec<&str> = literals
        .iter()
        .map(String::as_str)
        .filter(|text| !text.starts_with('-'))
        .collect();
    let first = operands.first().copied().unwrap_or_default();
    let second = operands.get(1).copied().unwrap_or_default();
    let fetching: &[&str] = match name {
        "rsync" => {
            return args.iter().any(is_remote).then(|| "rsync".to_owned());
        }
        "npm" => &[
            "install",
            "i",
            "ci",
            "add",
            "update",
            "upgrade",
            "up",
            "publish",
            "view",
            "info",
            "show",
            "outdated",
            "audit",
            "login",
            "adduser",
            "exec",
            "x",
            "init",
            "create",
            "search",
            "ping",
            "unpublish",
            "deprecate",
            "dist-tag",
            "owner",
            "access",
        ],
        "yarn" if first.is_empty() => return Some("yarn install".to_owned()),
        "yarn" => &[
            "install", "add", "upgrade", "up", "dlx", "publish", "info", "npm", "create",
            "outdated", "audit", "import", "login",
        ],
        "pnpm" => &[
            "install", "i", "add", "update", "up", "upgrade", "dlx", "publish", "outdated",
            "audit", "create", "fetch", "import", "login",
        ],
        "bun" => &[
            "install", "i", "add", "update", "x", "create", "publish", "upgrade",
        ],
        "pip" | "pip3" => &["install", "download", "search", "wheel", "index"],
        "pipx" => &[
            "install",
            "run",
            "upgrade",
            "upgrade-all",
            "reinstall",
            "inject",
        ],
        "uv" if first == "pip" => {
            return (second == "install" || second == "download")
                .then(|| format!("uv pip {second}"));
        }
        "uv" => &["add", "sync", "lock", "tool", "python", "run", "publish"],
        "poetry" | "pdm" | "hatch" | "conda" | "mamba" | "micromamba" => &[
            "install", "add", "update", "lock", "publish", "search", "create", "sync", "upgrade",
            "self",
        ],
        "cargo" => &[
            "install",
            "fetch",
            "update",
            "publish",
            "search",
            "add",
            "login",
            "owner",
            "yank",
            "generate-lockfile",
        ],
        "go" if first == "mod" => {
            return (second == "download" || second == "tidy").then(|| format!("go mod {second}"));
        }
        "go" => &["get", "install"],
        "gem" => &["install", "update", "push", "fetch", "search", "sources"],
        "bundle" | "bundler" => &["install", "update", "add", "outdated"],
        "composer" => &[
            "install",
            "require",
            "update",
            "create-project",
            "self-update",
            "outdated",
        ],
        "apt" | "apt-get" | "aptitude" => &[
            "install",
            "update",
            "upgrade",
            "dist-upgrade",
            "full-upgrade",
            "download",
            "source",
            "build-dep",
        ],
        "yum" | "dnf" | "zypper" | "apk" | "brew" | "port" | "snap" | "flatpak" | "choco"
        | "winget" | "scoop" => &[
            "install", "update", "upgrade", "add", "fetch", "tap", "download", "refresh", "search",
        ],
        "pacman" => {
            return literals
                .iter()
                .any(|text| text.starts_with("-S") || text.starts_with("--sync"))
                .then(|| "pacman -S".to_owned());
        }
        "docker" | "podman" => &["pull", "push", "login", "search"],
        "rustup" => &[
            "update",
            "install",
            "toolchain",
            "target",
            "component",
            "self",
        ],
        "deno" => &["install", "cache", "upgrade"],
        "nvm" | "volta" | "asdf" | "mise" | "sdk" => &["install"],
        "svn" => &[
            "checkout", "co", "update", "up", "commit", "ci", "export", "import", "info", "log",
        ],
        "hg" => &["pull", "push", "clone", "incoming", "outgoing"],
        _ => return None,
    };
    fetching.contains(&first).then(|| format!("{name} {first}"))
}
