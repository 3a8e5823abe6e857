package docstest

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
	proxyconfig "github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// external are programs a reader runs that the docs test does not check
// (cloud CLIs, system tools). A command of a program neither here nor
// checked below fails the test: add a checker, add it here, or mark its
// block "no-check: REASON".
var external = map[string]bool{
	"sam": true, "aws": true, "git": true, "cd": true, "cp": true, "mv": true, "sed": true,
	"sudo": true, "apt-get": true, "apt": true, "java": true, "openssl": true, "kill": true,
	"curl": true, "jq": true, "grep": true, "cat": true, "echo": true, "mkdir": true, "rm": true,
	"ls": true, "tail": true, "head": true, "true": true, "wait": true, "printf": true,
	"open": true, "xdg-open": true, "chmod": true, "tee": true, "awk": true, "gzip": true,
	"wc": true, "date": true, "ssh": true, "export": true, "test": true, "exit": true,
	"brew": true, "docker": true, "tar": true, "unzip": true, "which": true, "env": true,
	"sqlite3": true, "python3": true, "pip": true, "uvx": true, "sort": true, "diff": true,
	"touch": true, "ln": true, "read": true, "source": true, ".": true, "set": true,
	"trap": true, "sleep": true, "tailscale": true, "cloudflared": true,
	"ngrok": true, "staticcheck": true, "gofmt": true, "npx": true, "pwd": true,
}

var module = "github.com/mcp-elicitation/elicitation"

// checkCommand checks one command. inRecipe: the command is printed by
// "make -n", so programs we do not know are a recipe's business.
func (c *Checker) checkCommand(ctx context.Context, args []string, inRecipe bool) error {
	prog := args[0]
	if alias, ok := c.aliases[prog]; ok {
		prog = alias
	}
	if base, ours := c.ours(prog); ours {
		if err := c.checkOurs(ctx, base, args[1:]); err != nil {
			return err
		}
		if base == "mcp-elicitation-proxy" {
			return c.checkProxyConfig(args[1:])
		}
		return nil
	}
	switch prog {
	case "go":
		return c.checkGo(ctx, args[1:])
	case "make":
		if inRecipe {
			return nil
		}
		return c.checkMake(ctx, args[1:])
	case "node":
		return c.checkNode(args[1:])
	}
	if check, ok := hostCLIs[prog]; ok {
		return check(args[1:])
	}
	return checkUnknown(prog, inRecipe)
}

// hostCLIs check the command lines of the hosts' own programs.
var hostCLIs = map[string]func([]string) error{
	"npm":    checkNPM,
	"claude": checkClaude,
	"code":   checkCode,
	"goose":  checkGoose,
}

// ours tells whether prog runs one of our programs (by name, or from bin/)
// and which.
func (c *Checker) ours(prog string) (string, bool) {
	base := filepath.Base(prog)
	if _, ok := c.Bin[base]; !ok {
		return "", false
	}
	return base, prog == base || strings.HasPrefix(prog, "bin/") || strings.HasPrefix(prog, "./bin/") || strings.HasPrefix(prog, ".bin/")
}

// checkUnknown: a program the docs test neither checks nor lists fails.
func checkUnknown(prog string, inRecipe bool) error {
	switch {
	case inRecipe || external[prog] || strings.HasPrefix(prog, "<"):
		return nil
	case strings.Contains(prog, "="):
		return nil // an assignment the shell did not read as one (quoted)
	}
	return fmt.Errorf("the docs test does not know %q: check it in internal/docstest, list it there as external, or mark the block \"no-check: REASON\"", prog)
}

// goValueFlags are the go command's flags that take a value.
var goValueFlags = map[string]bool{
	"o": true, "tags": true, "ldflags": true, "gcflags": true, "asmflags": true, "C": true,
	"mod": true, "modfile": true, "exec": true, "p": true, "pkgdir": true, "overlay": true,
	"toolexec": true, "buildmode": true, "compiler": true, "covermode": true, "coverpkg": true,
	"pgo": true, "run": true, "bench": true, "benchtime": true, "count": true, "timeout": true,
	"cpu": true, "parallel": true, "skip": true, "coverprofile": true, "cpuprofile": true,
	"memprofile": true, "blockprofile": true, "mutexprofile": true, "outputdir": true,
	"trace": true, "fuzz": true, "fuzztime": true, "shuffle": true, "list": true, "vet": true,
}

func (c *Checker) checkGo(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("go without a command")
	}
	sub, args := args[0], args[1:]
	flags := map[string]string{}
	var pkgs []string
	rest := []string(nil)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			name, value, has := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if goValueFlags[name] && !has && i+1 < len(args) {
				i++
				value = args[i]
			}
			flags[name] = value
			continue
		}
		pkgs = append(pkgs, a)
		if sub == "run" {
			rest = args[i+1:]
			break
		}
	}
	switch sub {
	case "run", "build", "install", "test", "vet":
	default:
		return nil // go env, go version, go mod tidy, …
	}
	for _, p := range pkgs {
		if err := c.checkPackage(sub, p); err != nil {
			return err
		}
	}
	if sub == "run" && len(pkgs) == 1 {
		if prog := ourMain[strings.TrimSuffix(strings.TrimPrefix(pkgs[0], "./"), "/")]; prog != "" {
			return c.checkOurs(ctx, prog, rest)
		}
	}
	if sub == "test" {
		return c.checkTestPatterns(pkgs, flags)
	}
	if o := flags["o"]; sub == "build" && o != "" && len(pkgs) == 1 {
		// "go build -o /tmp/x ./cmd/y" then "/tmp/x …" in the same block.
		if prog := strings.TrimPrefix(strings.TrimSuffix(pkgs[0], "/"), "./cmd/"); c.Bin[prog] != "" {
			if c.aliases == nil {
				c.aliases = map[string]string{}
			}
			c.aliases[o] = prog
			c.aliases[strings.TrimSuffix(o, "/")+"/"+prog] = prog
		}
	}
	return nil
}

var ourMain = map[string]string{
	"cmd/elicitation":           "elicitation",
	"cmd/mcp-elicitation-proxy": "mcp-elicitation-proxy",
	"cmd/elicitation-bench":     "elicitation-bench",
}

var alternatives = regexp.MustCompile(`<([A-Za-z0-9_|-]+\|[A-Za-z0-9_|-]+)>`)

// checkPackage checks a package argument of go run/build/install/test.
func (c *Checker) checkPackage(sub, p string) error {
	if m := alternatives.FindStringSubmatch(p); m != nil {
		// ./functions/<mcp|review|submit>: each alternative must exist.
		for _, alt := range strings.Split(m[1], "|") {
			if err := c.checkPackage(sub, strings.Replace(p, m[0], alt, 1)); err != nil {
				return err
			}
		}
		return nil
	}
	if isPlaceholder(p) {
		return nil
	}
	path, version, hasVersion := strings.Cut(p, "@")
	if strings.HasPrefix(path, module) {
		if hasVersion {
			return fmt.Errorf("go %s %s@%s cannot work: this module is not published; from a clone, run go %s ./%s", sub, path, version, sub, strings.TrimPrefix(strings.TrimPrefix(path, module), "/"))
		}
		path = "./" + strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	}
	if !strings.HasPrefix(path, "./") && path != "." {
		return nil // another module's package, or a file
	}
	dir := filepath.Join(c.Root, strings.TrimSuffix(path, "/..."))
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("no package %s in this repository", path)
	}
	if !strings.HasSuffix(path, "/...") {
		if m, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(m) == 0 {
			return fmt.Errorf("%s has no Go files", path)
		}
	}
	return nil
}

// checkTestPatterns: -run and -bench must name tests that exist, so a
// documented command does not silently run nothing after a rename. "-run
// X" beside -bench is the usual way to run no tests and is left alone.
func (c *Checker) checkTestPatterns(pkgs []string, flags map[string]string) error {
	var dirs []string
	for _, p := range pkgs {
		if strings.HasSuffix(p, "...") || !strings.HasPrefix(p, "./") {
			return nil // too wide to say
		}
		dirs = append(dirs, filepath.Join(c.Root, p))
	}
	if len(dirs) == 0 {
		dirs = []string{c.Root}
	}
	funcs, err := testFuncs(dirs)
	if err != nil {
		return err
	}
	check := func(flag, prefix string) error {
		pat, ok := flags[flag]
		if !ok {
			return nil
		}
		if flag == "run" && flags["bench"] != "" {
			return nil
		}
		top, _, _ := strings.Cut(pat, "/")
		re, err := regexp.Compile(top)
		if err != nil {
			return fmt.Errorf("-%s %q: %v", flag, pat, err)
		}
		for _, f := range funcs {
			if strings.HasPrefix(f, prefix) && re.MatchString(f) {
				return nil
			}
		}
		return fmt.Errorf("-%s %q matches no %s function in %s", flag, pat, prefix, strings.Join(pkgs, " "))
	}
	if err := check("run", "Test"); err != nil {
		return err
	}
	return check("bench", "Benchmark")
}

func testFuncs(dirs []string) ([]string, error) {
	var names []string
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			for _, d := range af.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
					names = append(names, fd.Name.Name)
				}
			}
		}
	}
	return names, nil
}

// checkMake runs "make -n" with the documented targets and variables: the
// target must exist, and every command it would run must parse as shell
// (a quote in a variable can break a recipe) and pass the checks above.
func (c *Checker) checkMake(ctx context.Context, args []string) error {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && a != "-n" {
			return nil // make -C, -f …: not ours to second-guess
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "make", append([]string{"-n", "--no-print-directory"}, args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = c.Root, &out, &stderr
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make -n fails: %s", strings.TrimSpace(stderr.String()+" "+err.Error()))
	}
	cmds, err := Commands(out.String(), 1)
	if err != nil {
		return fmt.Errorf("the recipe it runs is not valid shell (%v): %s", err, strings.TrimSpace(out.String()))
	}
	for _, rc := range cmds {
		if err := c.checkCommand(ctx, rc.Args, true); err != nil {
			return fmt.Errorf("its recipe runs %s: %v", shorten(printWords(rc.Args)), err)
		}
	}
	return nil
}

func (c *Checker) checkNode(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return nil
	}
	script := args[0]
	if !filepath.IsAbs(script) && !isPlaceholder(script) {
		if _, err := os.Stat(filepath.Join(c.Root, script)); err != nil {
			return fmt.Errorf("%s does not exist (npm ci installs node_modules)", script)
		}
	}
	if strings.HasSuffix(script, "node_modules/.bin/mcp-inspector") {
		return checkInspector(args[1:])
	}
	return nil
}

func checkNPM(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("npm without a command")
	}
	return nil
}

// inspectorOptions are the options of the Inspector CLI this repository
// pins (2.x: mcp-inspector --cli --help, read from node_modules/
// @modelcontextprotocol/inspector/clients/cli/build/index.js), name →
// "value", "flag", "pairs" (variadic key=value words, read up to the next
// option) or "headers" (variadic "Name: Value" words).
var inspectorOptions = map[string]string{
	"--method": "value", "--tool-name": "value", "--tool-arg": "pairs", "--tool-args-json": "value",
	"--uri": "value", "--cursor": "value", "--prompt-name": "value", "--prompt-args": "pairs", "--log-level": "value",
	"--transport": "value", "--server-url": "value", "--header": "headers", "--cwd": "value", "-e": "value",
	"--catalog": "value", "--config": "value", "--server": "value", "--rename": "value",
	"--metadata": "pairs", "--tool-metadata": "pairs", "--connect-timeout": "value", "--protocol-era": "value",
	"--format": "value", "-q": "flag", "--quiet": "flag", "--output": "value", "--output-format": "value",
	"--app-info": "flag", "--advertise-apps": "flag", "--strict": "flag",
	"--verify": "flag", "--require-digests": "flag", "--skill-catalog-max-skills": "value", "--skill-catalog-max-bytes": "value",
	"--load": "flag", "--load-concurrency": "value", "--load-duration": "value", "--load-requests": "value", "--load-rate": "value",
	"--client-config": "value", "--client-id": "value", "--client-secret": "value", "--client-metadata-url": "value",
	"--callback-url": "value", "--use-stored-auth": "flag", "--stored-auth-only": "flag", "--relogin": "flag",
	"--no-revoke": "flag", "--wait-for-auth": "value", "--list-stored-auth": "flag", "--print-handoff": "flag",
	"--completion": "value", "-V": "flag", "--version": "flag", "-h": "flag", "--help": "flag",
}

// checkInspector checks "mcp-inspector ARGS" as Inspector 2.x reads them.
// Its launcher (clients/launcher) reads one mode flag (--web, --cli,
// --tui) from the front and hands everything after it to that client
// unchanged. The CLI splits at "--": words before it that start with a
// non-option are the server's command (and the options follow "--"),
// otherwise the options come first and the server's command after "--".
// Without "--", the words that are not options nor their values are the
// server's URL or command; a variadic option (--tool-arg, --header …)
// takes every word up to the next option, so a URL or command after it
// is read as one of its pairs.
func checkInspector(args []string) error {
	mode := 0
	for mode < len(args) && (args[mode] == "--web" || args[mode] == "--cli" || args[mode] == "--tui") {
		mode++
	}
	if mode > 1 {
		return fmt.Errorf("the Inspector takes one of --web, --cli, --tui")
	}
	if mode == 0 || args[0] != "--cli" {
		return nil // the web UI or the TUI
	}
	opts, r := args[1:], inspectorRead{}
	var trailing []string
	if i := slices.Index(opts, "--"); i >= 0 {
		before, after := opts[:i], opts[i+1:]
		if len(before) > 0 && !strings.HasPrefix(before[0], "-") {
			r.target, opts = before, after
		} else {
			opts, trailing = before, after
		}
	}
	for i := 0; i < len(opts); i++ {
		a := opts[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			r.target = append(r.target, a)
			continue
		}
		used, err := r.option(a, opts[i+1:])
		if err != nil {
			return err
		}
		i += used
	}
	r.target = append(r.target, trailing...)
	if r.method == "" {
		return fmt.Errorf("the Inspector CLI needs --method")
	}
	if len(r.target) == 0 && !r.server {
		return fmt.Errorf("the Inspector CLI needs a server URL or command (or --server-url, or --config with --server)")
	}
	return nil
}

// inspectorRead is the Inspector CLI's reading of its arguments so far.
type inspectorRead struct {
	target []string // the server URL or command
	method string
	server bool // --server-url or --server names the server instead
}

// option reads one option of the CLI with the words after it (rest) and
// returns how many of them it took.
func (r *inspectorRead) option(a string, rest []string) (int, error) {
	name, value, has := strings.Cut(a, "=")
	kind, ok := inspectorOptions[name]
	switch {
	case !ok && len(r.target) > 0 && !strings.HasPrefix(r.target[0], "http"):
		r.target = append(r.target, a) // the server command's own option
		return 0, nil
	case !ok:
		return 0, fmt.Errorf("the Inspector CLI (2.x) has no option %s: it would ignore it silently", name)
	case kind == "flag":
		return 0, nil
	case kind == "pairs" || kind == "headers":
		return inspectorPairs(name, kind, has, rest)
	}
	used := 0
	if !has {
		if len(rest) == 0 {
			return 0, fmt.Errorf("%s %w", name, errNoValue)
		}
		value, used = rest[0], 1
	}
	switch name {
	case "--method":
		r.method = value
	case "--server-url", "--server":
		r.server = true
	case "--transport":
		if value != "http" && value != "sse" && value != "stdio" {
			return 0, fmt.Errorf("--transport %s: http, sse or stdio", value)
		}
	}
	return used, nil
}

// inspectorPairs reads the words of a variadic option: every word up to
// the next option, each key=value (or, for --header, "Name: Value").
func inspectorPairs(name, kind string, has bool, rest []string) (int, error) {
	sep, form := "=", "key=value"
	if kind == "headers" {
		sep, form = ":", `"Name: Value"`
	}
	n := 0
	for n < len(rest) && !strings.HasPrefix(rest[n], "-") {
		k, v, ok := strings.Cut(rest[n], sep)
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" || kind == "headers" && strings.Contains(rest[n], "://") {
			return 0, fmt.Errorf("%s reads every word up to the next option as %s, so %q is read as one: put the server URL or command before the options, or after \"--\" at the end", name, form, rest[n])
		}
		n++
	}
	if n == 0 && !has {
		return 0, fmt.Errorf("%s without %s", name, form)
	}
	return n, nil
}

// checkClaude checks "claude mcp add …" and "claude mcp add-json NAME JSON"
// against Claude Code's syntax (2.1.x, docs/hosts.md).
func checkClaude(args []string) error {
	if len(args) < 2 || args[0] != "mcp" {
		return nil
	}
	switch args[1] {
	case "add":
		return checkClaudeAdd(args[2:])
	case "add-json":
		if len(args) < 4 {
			return fmt.Errorf("claude mcp add-json needs a name and a JSON object")
		}
		return validateJSONEntry(hostconfig.ClaudeCode, args[3])
	}
	return nil
}

// claudeAddOptions are the options of "claude mcp add" (2.1.x), name →
// "value", "values" (variadic: every word up to the next option) or "flag".
var claudeAddOptions = map[string]string{
	"-t": "value", "--transport": "value", "-s": "value", "--scope": "value",
	"--client-id": "value", "--callback-port": "value",
	"-e": "values", "--env": "values", "-H": "values", "--header": "values",
	"--client-secret": "flag",
}

func checkClaudeAdd(args []string) error {
	var pos []string
	transport := "stdio"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			continue
		}
		values, err := claudeOption(a, args[i+1:], len(pos))
		if err != nil {
			return err
		}
		i += values.used
		if values.transport != "" {
			transport = values.transport
		}
	}
	if len(pos) < 2 {
		return fmt.Errorf("claude mcp add needs a name and a URL or command")
	}
	if transport != "stdio" && !isPlaceholder(pos[1]) && !strings.HasPrefix(pos[1], "http") {
		return fmt.Errorf("claude mcp add --transport %s needs an http(s) URL, got %q", transport, pos[1])
	}
	if transport == "stdio" && strings.HasPrefix(pos[1], "http") {
		return fmt.Errorf("claude mcp add without --transport http starts %q as a command: add --transport http", pos[1])
	}
	return nil
}

// claudeRead is what one option of claude mcp add took.
type claudeRead struct {
	used      int    // words after the option taken as its values
	transport string // --transport's value
}

// claudeOption reads one option with the words after it (rest); seen is
// how many positional words (name, URL) came before it.
func claudeOption(a string, rest []string, seen int) (claudeRead, error) {
	name, value, has := strings.Cut(a, "=")
	kind, ok := claudeAddOptions[name]
	switch {
	case !ok:
		return claudeRead{}, fmt.Errorf("claude mcp add has no option %s", name)
	case kind == "flag":
		return claudeRead{}, nil
	case !has && len(rest) == 0:
		return claudeRead{}, fmt.Errorf("%s %w", name, errNoValue)
	}
	var r claudeRead
	values := []string{value}
	if !has {
		values = rest[:1]
		if kind == "values" {
			for len(values) < len(rest) && !strings.HasPrefix(rest[len(values)], "-") {
				values = rest[:len(values)+1]
			}
		}
		r.used = len(values)
	}
	if kind == "values" && len(values) > 1 && seen < 2 {
		return r, fmt.Errorf("%s takes every word up to the next option (Claude Code 2.1.x), so it swallows %q: put it after the name and the URL", name, values[1])
	}
	return r, claudeValue(name, values[0], &r)
}

func claudeValue(name, value string, r *claudeRead) error {
	switch name {
	case "-t", "--transport":
		if value != "stdio" && value != "http" && value != "sse" {
			return fmt.Errorf("--transport %s: stdio, http or sse", value)
		}
		r.transport = value
	case "-s", "--scope":
		if value != "local" && value != "user" && value != "project" {
			return fmt.Errorf("--scope %s: local, user or project", value)
		}
	case "-H", "--header":
		k, v, ok := strings.Cut(value, ":")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
			return fmt.Errorf("--header %q is not \"Name: value\"", value)
		}
		if strings.EqualFold(strings.TrimSpace(k), "Authorization") && !strings.HasPrefix(strings.TrimSpace(v), "Bearer ") {
			return fmt.Errorf("--header %q: the server reads \"Authorization: Bearer <key>\"", value)
		}
	}
	return nil
}

// checkCode checks "code --add-mcp JSON" (VS Code).
func checkCode(args []string) error {
	for i, a := range args {
		if a == "--add-mcp" {
			if i+1 >= len(args) {
				return fmt.Errorf("--add-mcp %w", errNoValue)
			}
			return validateJSONEntry(hostconfig.VSCode, args[i+1])
		}
	}
	return nil
}

// checkGoose checks "goose session --with-streamable-http-extension URL".
func checkGoose(args []string) error {
	for i, a := range args {
		if a == "--with-streamable-http-extension" || a == "--with-remote-extension" {
			if i+1 >= len(args) {
				return fmt.Errorf("%s %w", a, errNoValue)
			}
			if u := args[i+1]; !isPlaceholder(u) && !strings.HasPrefix(u, "http") {
				return fmt.Errorf("%s takes a URL, got %q", a, u)
			}
		}
	}
	return nil
}

// checkProxyConfig loads the file a proxy command names with --config,
// through the proxy's own loader, when it is a file of this repository.
func (c *Checker) checkProxyConfig(args []string) error {
	for i, a := range args {
		name, value, has := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "config" || !strings.HasPrefix(a, "-") {
			continue
		}
		if !has && i+1 < len(args) {
			value = args[i+1]
		}
		if value == "" || isPlaceholder(value) || filepath.IsAbs(value) || !strings.HasPrefix(value, "examples/") {
			return nil // the reader's own file
		}
		if _, err := proxyconfig.LoadWith(filepath.Join(c.Root, value), proxyconfig.Options{}); err != nil {
			return fmt.Errorf("--config %s: %v", value, err)
		}
	}
	return nil
}
