package ytt_test

import (
	"errors"
	"fmt"

	yttcmd "carvel.dev/ytt/pkg/cmd/template"
	"carvel.dev/ytt/pkg/files"
	uierrs "github.com/cppforlife/go-cli-ui/errors"

	"github.com/surveyor-dev/surveyor/pkg/render/ytt"
)

// referenceEval is the ytt binary's own pipeline (`ytt -f - --data-value-yaml ...`, its
// cmd/template package) run in process: what Template.Eval must print, byte for byte. Only
// tests link it, so the controller does not link ytt's schema package (see docs/ytt.md).
func referenceEval(source string, flags []string) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("ytt: Error: %v\n", r)
		}
	}()
	file, err := files.NewFileFromSource(files.NewBytesSource("stdin.yml", []byte(source)))
	if err != nil {
		return nil, err
	}
	opts := yttcmd.NewOptions()
	opts.DataValuesFlags.KVsFromYAML = flags
	result := opts.RunWithFiles(yttcmd.Input{Files: []*files.File{file}}, ytt.QuietUI{})
	if result.Err != nil {
		return nil, errors.New(ytt.Deterministic(fmt.Sprintf("ytt: Error: %s\n", uierrs.NewMultiLineError(result.Err))))
	}
	return result.DocSet.AsBytes()
}
