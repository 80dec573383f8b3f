package roofline

import (
	"reflect"

	"github.com/rprof/rprof/internal/termtext"
)

// cleanText makes every string a document holds (labels, flag messages,
// machine names, map keys) safe to print on a terminal, as the readers
// return it: a document may come from anyone, and its text reaches
// terminals and Markdown through every command that reads it.
func cleanText(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(termtext.Clean(v.String(), 0))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			cleanText(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				cleanText(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			cleanText(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		clean := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(it.Key())
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			cleanText(k)
			cleanText(e)
			clean.SetMapIndex(k, e)
		}
		if v.CanSet() {
			v.Set(clean)
		}
	}
}
