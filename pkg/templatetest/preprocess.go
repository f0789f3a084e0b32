package templatetest

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	yttcmd "carvel.dev/ytt/pkg/cmd/template"
	"carvel.dev/ytt/pkg/files"
	uierrs "github.com/cppforlife/go-cli-ui/errors"

	"github.com/surveyor-dev/surveyor/pkg/manifest"
	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// read reads the documents of paths, first preprocessed with ytt when values (a data values
// file: given.template.yttPath, given.supplyChain.yttPath) is set, as Cartographer's template
// tests preprocess templates kept as ytt files.
//
// This is ytt's whole pipeline (several files, data values files), not pkg/render/ytt's
// single template: it runs only here, in the CLI, so the controller does not link it.
func read(values string, paths ...string) ([]manifest.Document, error) {
	if values == "" {
		return manifest.Read(paths...)
	}
	out, err := preprocess(values, paths)
	if err != nil {
		return nil, err
	}
	return manifest.Parse(strings.Join(paths, ", ")+" (preprocessed by ytt)", bytes.NewReader(out))
}

// preprocess runs `ytt -f PATH... --data-values-file VALUES`, or, when VALUES holds a
// @data/values document, `ytt -f PATH... -f VALUES`.
func preprocess(values string, paths []string) ([]byte, error) {
	opts := yttcmd.NewOptions()
	b, err := os.ReadFile(values)
	if err != nil {
		return nil, err
	}
	inputs := paths
	if bytes.Contains(b, []byte("#@data/values")) {
		inputs = append(inputs[:len(inputs):len(inputs)], values)
	} else {
		opts.DataValuesFlags.FromFiles = []string{values}
	}
	fs, err := files.NewSortedFilesFromPaths(inputs, files.SymlinkAllowOpts{})
	if err != nil {
		return nil, err
	}
	result := opts.RunWithFiles(yttcmd.Input{Files: fs}, ytt.QuietUI{})
	if result.Err != nil {
		return nil, fmt.Errorf("preprocessing %s with ytt data values %s: ytt: Error: %s", strings.Join(paths, ", "), values, uierrs.NewMultiLineError(result.Err))
	}
	return result.DocSet.AsBytes()
}
