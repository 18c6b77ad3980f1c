//! Everything the program prints that is more than a line: the check
//! report as text and as a self-contained HTML page, the comparison as a
//! table and as a picture.

pub mod compare_svg;
pub mod compare_table;
pub mod html;
pub mod report_text;
