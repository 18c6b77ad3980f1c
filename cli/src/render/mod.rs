//! Everything the program prints that is more than a line: the check
//! report as text, the comparison as a table and as a picture.

pub mod compare_svg;
pub mod compare_table;
pub mod report_text;
