// Package encoder runs an image encoder exported to ONNX — the backbone whose
// penultimate features are the embedding space of the real-image experiments
// — through ONNX Runtime (github.com/yalue/onnxruntime_go, cgo). It is the
// only package of ccs that needs cgo and a shared library; the core library
// stays pure Go.
//
// The runtime library is libonnxruntime.so.1 from the npm package
// onnxruntime-node@1.30.0, which scripts/setup unpacks into the cache
// directory; $CCS_ONNXRUNTIME points at any other ONNX Runtime install.
package encoder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ccsets/ccs/embed"
	"github.com/ccsets/ccs/images"
)

// RuntimeVersion is the ONNX Runtime the set-up script installs.
const RuntimeVersion = "1.30.0"

// LibraryPath is the ONNX Runtime shared library ccs loads: $CCS_ONNXRUNTIME,
// else the one scripts/setup put in the cache.
func LibraryPath() string {
	if p := os.Getenv("CCS_ONNXRUNTIME"); p != "" {
		return p
	}
	return filepath.Join(images.CacheDir(), "onnxruntime-"+RuntimeVersion, "libonnxruntime.so.1")
}

var (
	initOnce sync.Once
	initErr  error
)

// start initialises ONNX Runtime once per process.
func start() error {
	initOnce.Do(func() {
		lib := LibraryPath()
		if _, err := os.Stat(lib); err != nil {
			initErr = fmt.Errorf("ONNX Runtime library: %w (run scripts/setup, or set CCS_ONNXRUNTIME)", err)
			return
		}
		ort.SetSharedLibraryPath(lib)
		if err := ort.InitializeEnvironment(); err != nil {
			initErr = fmt.Errorf("ONNX Runtime (%s): %w", lib, err)
		}
	})
	return initErr
}

// Options configures an encoder. Zero fields take the defaults.
type Options struct {
	Input    string // input name; "" means the model's only input
	Features string // output holding the features; "" means "features"
	// Logits is the output holding class logits; "" means "logits" when the
	// model has it (no logits otherwise), "-" means none.
	Logits string
	// Activations is the output holding per-layer activation summaries (the
	// COMBOOD baseline's maximum activations); "" means "activations" when
	// the model has it, "-" means none.
	Activations string
	// The model's input is (pixel·Scale − Mean)/Std for 8-bit pixel values
	// 0–255. Zero Scale means 1/255 and zero Std means 1: pixel/255.
	Scale, Mean, Std float64
	Batch            int // images per inference call; 0 means 256
	Threads          int // ONNX Runtime's threads; 0 means GOMAXPROCS
}

func (o Options) withDefaults() Options {
	if o.Features == "" {
		o.Features = "features"
	}
	if o.Scale == 0 {
		o.Scale = 1.0 / 255
	}
	if o.Std == 0 {
		o.Std = 1
	}
	if o.Batch == 0 {
		o.Batch = 256
	}
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	return o
}

// Model is an ONNX encoder ready to run. It is not safe for concurrent use.
type Model struct {
	path          string
	opt           Options
	session       *ort.DynamicAdvancedSession
	c, h, w       int // input channels, rows, columns
	dim, classes  int // feature dimension; logit classes (0: none)
	acts          int // activation summaries (0: none)
	inputs, names []string
}

// Open loads the model at path, checking that it takes one float32 image
// tensor (batch, channels, H, W) with 1 or 3 channels and returns float32
// features (batch, D) and, if asked or present, logits (batch, C).
func Open(path string, opt Options) (*Model, error) {
	opt = opt.withDefaults()
	if !(opt.Std > 0) || opt.Batch < 1 || opt.Threads < 1 {
		return nil, fmt.Errorf("encoder: std %v, batch %d, threads %d; want all positive", opt.Std, opt.Batch, opt.Threads)
	}
	if err := start(); err != nil {
		return nil, err
	}
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := &Model{path: path, opt: opt}
	var in *ort.InputOutputInfo
	for i := range ins {
		if opt.Input == "" && len(ins) == 1 || ins[i].Name == opt.Input {
			in = &ins[i]
		}
	}
	if in == nil {
		return nil, fmt.Errorf("%s: no input %q among %v (give -input)", path, opt.Input, names(ins))
	}
	d := in.Dimensions
	if in.DataType != ort.TensorElementDataTypeFloat || len(d) != 4 || (d[1] != 1 && d[1] != 3) || d[2] < 1 || d[3] < 1 {
		return nil, fmt.Errorf("%s: input %q is %v of %v; want float32 (batch, 1 or 3 channels, H, W)", path, in.Name, d, in.DataType)
	}
	m.c, m.h, m.w = int(d[1]), int(d[2]), int(d[3])
	find := func(name string) *ort.InputOutputInfo {
		for i := range outs {
			if outs[i].Name == name {
				return &outs[i]
			}
		}
		return nil
	}
	matrix := func(o *ort.InputOutputInfo) (int, error) {
		if o.DataType != ort.TensorElementDataTypeFloat || len(o.Dimensions) != 2 || o.Dimensions[1] < 1 {
			return 0, fmt.Errorf("%s: output %q is %v of %v; want float32 (batch, n)", path, o.Name, o.Dimensions, o.DataType)
		}
		return int(o.Dimensions[1]), nil
	}
	f := find(opt.Features)
	if f == nil {
		return nil, fmt.Errorf("%s: no output %q among %v (give -features)", path, opt.Features, names(outs))
	}
	if m.dim, err = matrix(f); err != nil {
		return nil, err
	}
	m.names = []string{opt.Features}
	// optional adds an optional output: "" takes def when the model has it,
	// "-" none, anything else must exist.
	optional := func(name, def, flag string, width *int) error {
		switch name {
		case "-":
			return nil
		case "":
			if find(def) == nil {
				return nil
			}
			name = def
		}
		o := find(name)
		if o == nil {
			return fmt.Errorf("%s: no output %q among %v (give -%s, or -%s - for none)", path, name, names(outs), flag, flag)
		}
		var err error
		if *width, err = matrix(o); err != nil {
			return err
		}
		m.names = append(m.names, name)
		return nil
	}
	if err := optional(opt.Logits, "logits", "logits", &m.classes); err != nil {
		return nil, err
	}
	if err := optional(opt.Activations, "activations", "activations", &m.acts); err != nil {
		return nil, err
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(opt.Threads); err != nil {
		return nil, err
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	m.inputs = []string{in.Name}
	if m.session, err = ort.NewDynamicAdvancedSession(path, m.inputs, m.names, so); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func names(io []ort.InputOutputInfo) []string {
	var s []string
	for _, v := range io {
		s = append(s, v.Name)
	}
	return s
}

// Dim is the feature dimension.
func (m *Model) Dim() int { return m.dim }

// Classes is the number of logits (0 when the model gives none).
func (m *Model) Classes() int { return m.classes }

// Close releases the session.
func (m *Model) Close() error { return m.session.Destroy() }

// Activations is the number of activation summaries per image (0 when the
// model gives none).
func (m *Model) Activations() int { return m.acts }

// Embed runs the encoder on every image of s, in batches, checking ctx
// between them. progress, if not nil, is called after each batch. A non-finite output is an error naming
// the output and the image.
func (m *Model) Embed(ctx context.Context, s *images.Set, progress func(done, total int)) (embed.Outputs, error) {
	var o embed.Outputs
	if s.H != m.h || s.W != m.w {
		return o, fmt.Errorf("%s: the model takes %d×%d images, %s has %d×%d", m.path, m.h, m.w, s.Name, s.H, s.W)
	}
	widths := []int{m.dim, m.classes, m.acts}
	dst := []*[]float32{&o.Features, &o.Logits, &o.Activations}
	for i, w := range widths {
		if w > 0 {
			*dst[i] = make([]float32, s.N*w)
		}
	}
	px := m.h * m.w
	buf := make([]float32, min(m.opt.Batch, s.N)*m.c*px)
	a := float32(255 * m.opt.Scale / m.opt.Std)
	b := float32(-m.opt.Mean / m.opt.Std)
	for lo := 0; lo < s.N; lo += m.opt.Batch {
		if err := ctx.Err(); err != nil {
			return embed.Outputs{}, err
		}
		hi := min(s.N, lo+m.opt.Batch)
		n := hi - lo
		x := buf[:n*m.c*px]
		for i := range n {
			img := s.Image(lo + i)
			for c := range m.c { // grey images feed every channel alike
				dst := x[(i*m.c+c)*px : (i*m.c+c+1)*px]
				for j, v := range img {
					dst[j] = a*v + b
				}
			}
		}
		var parts [][]float32
		for i, w := range widths {
			if w > 0 {
				parts = append(parts, (*dst[i])[lo*w:hi*w])
			}
		}
		if err := m.run(x, n, parts); err != nil {
			return embed.Outputs{}, fmt.Errorf("%s on %s, images %d–%d: %w", m.path, s.Name, lo, hi-1, err)
		}
		if progress != nil {
			progress(hi, s.N)
		}
	}
	name := 0 // m.names holds the present outputs in widths' order
	for i, w := range widths {
		if w == 0 {
			continue
		}
		if j := slices.IndexFunc(*dst[i], func(v float32) bool { return v != v || v > 3.4e38 || v < -3.4e38 }); j >= 0 {
			return embed.Outputs{}, fmt.Errorf("%s on %s: output %q of image %d is %v", m.path, s.Name, m.names[name], j/w, (*dst[i])[j])
		}
		name++
	}
	return o, nil
}

// run runs one batch of n images, writing the outputs (in m.names' order,
// each n×width) into outs.
func (m *Model) run(x []float32, n int, outs [][]float32) error {
	in, err := ort.NewTensor(ort.NewShape(int64(n), int64(m.c), int64(m.h), int64(m.w)), x)
	if err != nil {
		return err
	}
	defer in.Destroy()
	vals := make([]ort.Value, len(outs))
	for i, o := range outs {
		t, err := ort.NewTensor(ort.NewShape(int64(n), int64(len(o)/n)), o)
		if err != nil {
			return err
		}
		defer t.Destroy()
		vals[i] = t
	}
	if err := m.session.Run([]ort.Value{in}, vals); err != nil {
		return fmt.Errorf("inference: %w", err)
	}
	return nil
}
