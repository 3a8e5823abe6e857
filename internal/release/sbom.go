package main

import (
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// writeSBOM writes a CycloneDX 1.6 SBOM of an archive to path: the
// archive's application, its binaries, and what each links in (the Go
// standard library and every module), read from the build information
// the Go linker writes into each binary: what was built, not what go.mod
// lists. A module's hash is its go.sum h1 hash (the SHA-256 over the
// module's files that the checksum database holds).
func writeSBOM(path, version string, t Target, bins []string, at time.Time) error {
	root := cdx.Component{
		BOMRef:     purl("github.com/mcp-elicitation/elicitation", version, t),
		Type:       cdx.ComponentTypeApplication,
		Name:       Project,
		Version:    version,
		PackageURL: purl("github.com/mcp-elicitation/elicitation", version, t),
	}
	var comps []cdx.Component
	seen := map[string]bool{}
	deps := []cdx.Dependency{{Ref: root.BOMRef}}
	var binRefs []string
	for _, b := range bins {
		bin, mods, err := binaryComponents(b, version, t)
		if err != nil {
			return err
		}
		comps = append(comps, bin)
		binRefs = append(binRefs, bin.BOMRef)
		var refs []string
		for _, m := range mods {
			refs = append(refs, m.BOMRef)
			if !seen[m.BOMRef] {
				seen[m.BOMRef] = true
				comps = append(comps, m)
			}
		}
		deps = append(deps, cdx.Dependency{Ref: bin.BOMRef, Dependencies: &refs})
	}
	deps[0].Dependencies = &binRefs
	slices.SortStableFunc(comps[len(bins):], func(a, b cdx.Component) int { return strings.Compare(a.BOMRef, b.BOMRef) })

	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Timestamp: at.Format(time.RFC3339),
		Component: &root,
		Properties: &[]cdx.Property{
			{Name: "mcp-elicitation:goos", Value: t.OS},
			{Name: "mcp-elicitation:goarch", Value: t.Arch},
		},
	}
	bom.Components = &comps
	bom.Dependencies = &deps
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := cdx.NewBOMEncoder(f, cdx.BOMFileFormatJSON).SetPretty(true).EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// binaryComponents reads a binary's build information: the binary as an
// application component, and the standard library and the modules it
// links in as library components.
func binaryComponents(path, version string, t Target) (cdx.Component, []cdx.Component, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return cdx.Component{}, nil, fmt.Errorf("build information of %s: %w", filepath.Base(path), err)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".exe")
	props := []cdx.Property{{Name: "mcp-elicitation:package", Value: bi.Path}}
	for _, s := range bi.Settings {
		props = append(props, cdx.Property{Name: "mcp-elicitation:build:" + s.Key, Value: s.Value})
	}
	bin := cdx.Component{
		BOMRef:     purl(bi.Path, version, t),
		Type:       cdx.ComponentTypeApplication,
		Name:       name,
		Version:    version,
		PackageURL: purl(bi.Path, version, t),
		Properties: &props,
	}
	std := cdx.Component{
		BOMRef:     purl("std", bi.GoVersion, t),
		Type:       cdx.ComponentTypeLibrary,
		Name:       "std",
		Version:    bi.GoVersion,
		PackageURL: purl("std", bi.GoVersion, t),
	}
	mods := []cdx.Component{std}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		mods = append(mods, moduleComponent(d, t))
	}
	return bin, mods, nil
}

func moduleComponent(m *debug.Module, t Target) cdx.Component {
	c := cdx.Component{
		BOMRef:     purl(m.Path, m.Version, t),
		Type:       cdx.ComponentTypeLibrary,
		Name:       m.Path,
		Version:    m.Version,
		PackageURL: purl(m.Path, m.Version, t),
	}
	if sum, ok := strings.CutPrefix(m.Sum, "h1:"); ok {
		if raw, err := base64.StdEncoding.DecodeString(sum); err == nil {
			c.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(raw)}}
		}
	}
	return c
}

// purl is a Go package URL (github.com/package-url/purl-spec, type golang).
func purl(path, version string, t Target) string {
	return fmt.Sprintf("pkg:golang/%s@%s?goarch=%s&goos=%s", path, version, t.Arch, t.OS)
}
