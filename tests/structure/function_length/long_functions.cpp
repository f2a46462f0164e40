// Fixture of tools/check_function_length (CTest function_length_check_catches):
// too_long_free, too_long_member, Widget::Widget(int, int) (its initializer list has a
// brace) and Functor::operator() are over 100 lines and must be listed; exactly_100,
// fine, the in-class constructor and the 150-line table must not. Never compiled.
// clang-format off: the line counts are the fixture; tools/format must not change them.
#include <vector>
#define MACRO_WITH_BRACES(x) \
  { \
    if (x) { return; } \
  }

namespace fixture {
int too_long_free(int x) {
  x += 0;   // { a brace in a comment }
  x += 1;   // { a brace in a comment }
  x += 2;   // { a brace in a comment }
  x += 3;   // { a brace in a comment }
  x += 4;   // { a brace in a comment }
  x += 5;   // { a brace in a comment }
  x += 6;   // { a brace in a comment }
  x += 7;   // { a brace in a comment }
  x += 8;   // { a brace in a comment }
  x += 9;   // { a brace in a comment }
  x += 10;  // { a brace in a comment }
  x += 11;  // { a brace in a comment }
  x += 12;  // { a brace in a comment }
  x += 13;  // { a brace in a comment }
  x += 14;  // { a brace in a comment }
  x += 15;  // { a brace in a comment }
  x += 16;  // { a brace in a comment }
  x += 17;  // { a brace in a comment }
  x += 18;  // { a brace in a comment }
  x += 19;  // { a brace in a comment }
  x += 20;  // { a brace in a comment }
  x += 21;  // { a brace in a comment }
  x += 22;  // { a brace in a comment }
  x += 23;  // { a brace in a comment }
  x += 24;  // { a brace in a comment }
  x += 25;  // { a brace in a comment }
  x += 26;  // { a brace in a comment }
  x += 27;  // { a brace in a comment }
  x += 28;  // { a brace in a comment }
  x += 29;  // { a brace in a comment }
  x += 30;  // { a brace in a comment }
  x += 31;  // { a brace in a comment }
  x += 32;  // { a brace in a comment }
  x += 33;  // { a brace in a comment }
  x += 34;  // { a brace in a comment }
  x += 35;  // { a brace in a comment }
  x += 36;  // { a brace in a comment }
  x += 37;  // { a brace in a comment }
  x += 38;  // { a brace in a comment }
  x += 39;  // { a brace in a comment }
  x += 40;  // { a brace in a comment }
  x += 41;  // { a brace in a comment }
  x += 42;  // { a brace in a comment }
  x += 43;  // { a brace in a comment }
  x += 44;  // { a brace in a comment }
  x += 45;  // { a brace in a comment }
  x += 46;  // { a brace in a comment }
  x += 47;  // { a brace in a comment }
  x += 48;  // { a brace in a comment }
  x += 49;  // { a brace in a comment }
  x += 50;  // { a brace in a comment }
  x += 51;  // { a brace in a comment }
  x += 52;  // { a brace in a comment }
  x += 53;  // { a brace in a comment }
  x += 54;  // { a brace in a comment }
  x += 55;  // { a brace in a comment }
  x += 56;  // { a brace in a comment }
  x += 57;  // { a brace in a comment }
  x += 58;  // { a brace in a comment }
  x += 59;  // { a brace in a comment }
  x += 60;  // { a brace in a comment }
  x += 61;  // { a brace in a comment }
  x += 62;  // { a brace in a comment }
  x += 63;  // { a brace in a comment }
  x += 64;  // { a brace in a comment }
  x += 65;  // { a brace in a comment }
  x += 66;  // { a brace in a comment }
  x += 67;  // { a brace in a comment }
  x += 68;  // { a brace in a comment }
  x += 69;  // { a brace in a comment }
  x += 70;  // { a brace in a comment }
  x += 71;  // { a brace in a comment }
  x += 72;  // { a brace in a comment }
  x += 73;  // { a brace in a comment }
  x += 74;  // { a brace in a comment }
  x += 75;  // { a brace in a comment }
  x += 76;  // { a brace in a comment }
  x += 77;  // { a brace in a comment }
  x += 78;  // { a brace in a comment }
  x += 79;  // { a brace in a comment }
  x += 80;  // { a brace in a comment }
  x += 81;  // { a brace in a comment }
  x += 82;  // { a brace in a comment }
  x += 83;  // { a brace in a comment }
  x += 84;  // { a brace in a comment }
  x += 85;  // { a brace in a comment }
  x += 86;  // { a brace in a comment }
  x += 87;  // { a brace in a comment }
  x += 88;  // { a brace in a comment }
  x += 89;  // { a brace in a comment }
  x += 90;  // { a brace in a comment }
  x += 91;  // { a brace in a comment }
  x += 92;  // { a brace in a comment }
  x += 93;  // { a brace in a comment }
  x += 94;  // { a brace in a comment }
  x += 95;  // { a brace in a comment }
  x += 96;  // { a brace in a comment }
  x += 97;  // { a brace in a comment }
  x += 98;  // { a brace in a comment }
  x += 99;  // { a brace in a comment }
  return x;
}

int exactly_100(int x) {
  x += 0;   // { a brace in a comment }
  x += 1;   // { a brace in a comment }
  x += 2;   // { a brace in a comment }
  x += 3;   // { a brace in a comment }
  x += 4;   // { a brace in a comment }
  x += 5;   // { a brace in a comment }
  x += 6;   // { a brace in a comment }
  x += 7;   // { a brace in a comment }
  x += 8;   // { a brace in a comment }
  x += 9;   // { a brace in a comment }
  x += 10;  // { a brace in a comment }
  x += 11;  // { a brace in a comment }
  x += 12;  // { a brace in a comment }
  x += 13;  // { a brace in a comment }
  x += 14;  // { a brace in a comment }
  x += 15;  // { a brace in a comment }
  x += 16;  // { a brace in a comment }
  x += 17;  // { a brace in a comment }
  x += 18;  // { a brace in a comment }
  x += 19;  // { a brace in a comment }
  x += 20;  // { a brace in a comment }
  x += 21;  // { a brace in a comment }
  x += 22;  // { a brace in a comment }
  x += 23;  // { a brace in a comment }
  x += 24;  // { a brace in a comment }
  x += 25;  // { a brace in a comment }
  x += 26;  // { a brace in a comment }
  x += 27;  // { a brace in a comment }
  x += 28;  // { a brace in a comment }
  x += 29;  // { a brace in a comment }
  x += 30;  // { a brace in a comment }
  x += 31;  // { a brace in a comment }
  x += 32;  // { a brace in a comment }
  x += 33;  // { a brace in a comment }
  x += 34;  // { a brace in a comment }
  x += 35;  // { a brace in a comment }
  x += 36;  // { a brace in a comment }
  x += 37;  // { a brace in a comment }
  x += 38;  // { a brace in a comment }
  x += 39;  // { a brace in a comment }
  x += 40;  // { a brace in a comment }
  x += 41;  // { a brace in a comment }
  x += 42;  // { a brace in a comment }
  x += 43;  // { a brace in a comment }
  x += 44;  // { a brace in a comment }
  x += 45;  // { a brace in a comment }
  x += 46;  // { a brace in a comment }
  x += 47;  // { a brace in a comment }
  x += 48;  // { a brace in a comment }
  x += 49;  // { a brace in a comment }
  x += 50;  // { a brace in a comment }
  x += 51;  // { a brace in a comment }
  x += 52;  // { a brace in a comment }
  x += 53;  // { a brace in a comment }
  x += 54;  // { a brace in a comment }
  x += 55;  // { a brace in a comment }
  x += 56;  // { a brace in a comment }
  x += 57;  // { a brace in a comment }
  x += 58;  // { a brace in a comment }
  x += 59;  // { a brace in a comment }
  x += 60;  // { a brace in a comment }
  x += 61;  // { a brace in a comment }
  x += 62;  // { a brace in a comment }
  x += 63;  // { a brace in a comment }
  x += 64;  // { a brace in a comment }
  x += 65;  // { a brace in a comment }
  x += 66;  // { a brace in a comment }
  x += 67;  // { a brace in a comment }
  x += 68;  // { a brace in a comment }
  x += 69;  // { a brace in a comment }
  x += 70;  // { a brace in a comment }
  x += 71;  // { a brace in a comment }
  x += 72;  // { a brace in a comment }
  x += 73;  // { a brace in a comment }
  x += 74;  // { a brace in a comment }
  x += 75;  // { a brace in a comment }
  x += 76;  // { a brace in a comment }
  x += 77;  // { a brace in a comment }
  x += 78;  // { a brace in a comment }
  x += 79;  // { a brace in a comment }
  x += 80;  // { a brace in a comment }
  x += 81;  // { a brace in a comment }
  x += 82;  // { a brace in a comment }
  x += 83;  // { a brace in a comment }
  x += 84;  // { a brace in a comment }
  x += 85;  // { a brace in a comment }
  x += 86;  // { a brace in a comment }
  x += 87;  // { a brace in a comment }
  x += 88;  // { a brace in a comment }
  x += 89;  // { a brace in a comment }
  x += 90;  // { a brace in a comment }
  x += 91;  // { a brace in a comment }
  x += 92;  // { a brace in a comment }
  x += 93;  // { a brace in a comment }
  x += 94;  // { a brace in a comment }
  x += 95;  // { a brace in a comment }
  x += 96;  // { a brace in a comment }
  return x;
}

const std::vector<int> table = {
    0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,  17,  18,  19,  20,  21,
    22,  23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,  38,  39,  40,  41,  42,  43,
    44,  45,  46,  47,  48,  49,  50,  51,  52,  53,  54,  55,  56,  57,  58,  59,  60,  61,  62,  63,  64,  65,
    66,  67,  68,  69,  70,  71,  72,  73,  74,  75,  76,  77,  78,  79,  80,  81,  82,  83,  84,  85,  86,  87,
    88,  89,  90,  91,  92,  93,  94,  95,  96,  97,  98,  99,  100, 101, 102, 103, 104, 105, 106, 107, 108, 109,
    110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131,
    132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149,
};

class Widget : public Base {
 public:
  Widget(int a) : a_(a), b_{a} {}
  int too_long_member(int x) const {
    x += 0;    // { a brace in a comment }
    x += 1;    // { a brace in a comment }
    x += 2;    // { a brace in a comment }
    x += 3;    // { a brace in a comment }
    x += 4;    // { a brace in a comment }
    x += 5;    // { a brace in a comment }
    x += 6;    // { a brace in a comment }
    x += 7;    // { a brace in a comment }
    x += 8;    // { a brace in a comment }
    x += 9;    // { a brace in a comment }
    x += 10;   // { a brace in a comment }
    x += 11;   // { a brace in a comment }
    x += 12;   // { a brace in a comment }
    x += 13;   // { a brace in a comment }
    x += 14;   // { a brace in a comment }
    x += 15;   // { a brace in a comment }
    x += 16;   // { a brace in a comment }
    x += 17;   // { a brace in a comment }
    x += 18;   // { a brace in a comment }
    x += 19;   // { a brace in a comment }
    x += 20;   // { a brace in a comment }
    x += 21;   // { a brace in a comment }
    x += 22;   // { a brace in a comment }
    x += 23;   // { a brace in a comment }
    x += 24;   // { a brace in a comment }
    x += 25;   // { a brace in a comment }
    x += 26;   // { a brace in a comment }
    x += 27;   // { a brace in a comment }
    x += 28;   // { a brace in a comment }
    x += 29;   // { a brace in a comment }
    x += 30;   // { a brace in a comment }
    x += 31;   // { a brace in a comment }
    x += 32;   // { a brace in a comment }
    x += 33;   // { a brace in a comment }
    x += 34;   // { a brace in a comment }
    x += 35;   // { a brace in a comment }
    x += 36;   // { a brace in a comment }
    x += 37;   // { a brace in a comment }
    x += 38;   // { a brace in a comment }
    x += 39;   // { a brace in a comment }
    x += 40;   // { a brace in a comment }
    x += 41;   // { a brace in a comment }
    x += 42;   // { a brace in a comment }
    x += 43;   // { a brace in a comment }
    x += 44;   // { a brace in a comment }
    x += 45;   // { a brace in a comment }
    x += 46;   // { a brace in a comment }
    x += 47;   // { a brace in a comment }
    x += 48;   // { a brace in a comment }
    x += 49;   // { a brace in a comment }
    x += 50;   // { a brace in a comment }
    x += 51;   // { a brace in a comment }
    x += 52;   // { a brace in a comment }
    x += 53;   // { a brace in a comment }
    x += 54;   // { a brace in a comment }
    x += 55;   // { a brace in a comment }
    x += 56;   // { a brace in a comment }
    x += 57;   // { a brace in a comment }
    x += 58;   // { a brace in a comment }
    x += 59;   // { a brace in a comment }
    x += 60;   // { a brace in a comment }
    x += 61;   // { a brace in a comment }
    x += 62;   // { a brace in a comment }
    x += 63;   // { a brace in a comment }
    x += 64;   // { a brace in a comment }
    x += 65;   // { a brace in a comment }
    x += 66;   // { a brace in a comment }
    x += 67;   // { a brace in a comment }
    x += 68;   // { a brace in a comment }
    x += 69;   // { a brace in a comment }
    x += 70;   // { a brace in a comment }
    x += 71;   // { a brace in a comment }
    x += 72;   // { a brace in a comment }
    x += 73;   // { a brace in a comment }
    x += 74;   // { a brace in a comment }
    x += 75;   // { a brace in a comment }
    x += 76;   // { a brace in a comment }
    x += 77;   // { a brace in a comment }
    x += 78;   // { a brace in a comment }
    x += 79;   // { a brace in a comment }
    x += 80;   // { a brace in a comment }
    x += 81;   // { a brace in a comment }
    x += 82;   // { a brace in a comment }
    x += 83;   // { a brace in a comment }
    x += 84;   // { a brace in a comment }
    x += 85;   // { a brace in a comment }
    x += 86;   // { a brace in a comment }
    x += 87;   // { a brace in a comment }
    x += 88;   // { a brace in a comment }
    x += 89;   // { a brace in a comment }
    x += 90;   // { a brace in a comment }
    x += 91;   // { a brace in a comment }
    x += 92;   // { a brace in a comment }
    x += 93;   // { a brace in a comment }
    x += 94;   // { a brace in a comment }
    x += 95;   // { a brace in a comment }
    x += 96;   // { a brace in a comment }
    x += 97;   // { a brace in a comment }
    x += 98;   // { a brace in a comment }
    x += 99;   // { a brace in a comment }
    x += 100;  // { a brace in a comment }
    return x;
  }

 private:
  int a_, b_;
};

Widget::Widget(int a, int b) : a_(a), b_{b} {
  int x = 0;
  x += 0;   // { a brace in a comment }
  x += 1;   // { a brace in a comment }
  x += 2;   // { a brace in a comment }
  x += 3;   // { a brace in a comment }
  x += 4;   // { a brace in a comment }
  x += 5;   // { a brace in a comment }
  x += 6;   // { a brace in a comment }
  x += 7;   // { a brace in a comment }
  x += 8;   // { a brace in a comment }
  x += 9;   // { a brace in a comment }
  x += 10;  // { a brace in a comment }
  x += 11;  // { a brace in a comment }
  x += 12;  // { a brace in a comment }
  x += 13;  // { a brace in a comment }
  x += 14;  // { a brace in a comment }
  x += 15;  // { a brace in a comment }
  x += 16;  // { a brace in a comment }
  x += 17;  // { a brace in a comment }
  x += 18;  // { a brace in a comment }
  x += 19;  // { a brace in a comment }
  x += 20;  // { a brace in a comment }
  x += 21;  // { a brace in a comment }
  x += 22;  // { a brace in a comment }
  x += 23;  // { a brace in a comment }
  x += 24;  // { a brace in a comment }
  x += 25;  // { a brace in a comment }
  x += 26;  // { a brace in a comment }
  x += 27;  // { a brace in a comment }
  x += 28;  // { a brace in a comment }
  x += 29;  // { a brace in a comment }
  x += 30;  // { a brace in a comment }
  x += 31;  // { a brace in a comment }
  x += 32;  // { a brace in a comment }
  x += 33;  // { a brace in a comment }
  x += 34;  // { a brace in a comment }
  x += 35;  // { a brace in a comment }
  x += 36;  // { a brace in a comment }
  x += 37;  // { a brace in a comment }
  x += 38;  // { a brace in a comment }
  x += 39;  // { a brace in a comment }
  x += 40;  // { a brace in a comment }
  x += 41;  // { a brace in a comment }
  x += 42;  // { a brace in a comment }
  x += 43;  // { a brace in a comment }
  x += 44;  // { a brace in a comment }
  x += 45;  // { a brace in a comment }
  x += 46;  // { a brace in a comment }
  x += 47;  // { a brace in a comment }
  x += 48;  // { a brace in a comment }
  x += 49;  // { a brace in a comment }
  x += 50;  // { a brace in a comment }
  x += 51;  // { a brace in a comment }
  x += 52;  // { a brace in a comment }
  x += 53;  // { a brace in a comment }
  x += 54;  // { a brace in a comment }
  x += 55;  // { a brace in a comment }
  x += 56;  // { a brace in a comment }
  x += 57;  // { a brace in a comment }
  x += 58;  // { a brace in a comment }
  x += 59;  // { a brace in a comment }
  x += 60;  // { a brace in a comment }
  x += 61;  // { a brace in a comment }
  x += 62;  // { a brace in a comment }
  x += 63;  // { a brace in a comment }
  x += 64;  // { a brace in a comment }
  x += 65;  // { a brace in a comment }
  x += 66;  // { a brace in a comment }
  x += 67;  // { a brace in a comment }
  x += 68;  // { a brace in a comment }
  x += 69;  // { a brace in a comment }
  x += 70;  // { a brace in a comment }
  x += 71;  // { a brace in a comment }
  x += 72;  // { a brace in a comment }
  x += 73;  // { a brace in a comment }
  x += 74;  // { a brace in a comment }
  x += 75;  // { a brace in a comment }
  x += 76;  // { a brace in a comment }
  x += 77;  // { a brace in a comment }
  x += 78;  // { a brace in a comment }
  x += 79;  // { a brace in a comment }
  x += 80;  // { a brace in a comment }
  x += 81;  // { a brace in a comment }
  x += 82;  // { a brace in a comment }
  x += 83;  // { a brace in a comment }
  x += 84;  // { a brace in a comment }
  x += 85;  // { a brace in a comment }
  x += 86;  // { a brace in a comment }
  x += 87;  // { a brace in a comment }
  x += 88;  // { a brace in a comment }
  x += 89;  // { a brace in a comment }
  x += 90;  // { a brace in a comment }
  x += 91;  // { a brace in a comment }
  x += 92;  // { a brace in a comment }
  x += 93;  // { a brace in a comment }
  x += 94;  // { a brace in a comment }
  x += 95;  // { a brace in a comment }
  x += 96;  // { a brace in a comment }
  x += 97;  // { a brace in a comment }
  x += 98;  // { a brace in a comment }
  x += 99;  // { a brace in a comment }
}

int Functor::operator()(int x) const {
  auto f = [&](int y) { return y + x; };
  const char* s = "}}}{{{";
  x += 0;   // { a brace in a comment }
  x += 1;   // { a brace in a comment }
  x += 2;   // { a brace in a comment }
  x += 3;   // { a brace in a comment }
  x += 4;   // { a brace in a comment }
  x += 5;   // { a brace in a comment }
  x += 6;   // { a brace in a comment }
  x += 7;   // { a brace in a comment }
  x += 8;   // { a brace in a comment }
  x += 9;   // { a brace in a comment }
  x += 10;  // { a brace in a comment }
  x += 11;  // { a brace in a comment }
  x += 12;  // { a brace in a comment }
  x += 13;  // { a brace in a comment }
  x += 14;  // { a brace in a comment }
  x += 15;  // { a brace in a comment }
  x += 16;  // { a brace in a comment }
  x += 17;  // { a brace in a comment }
  x += 18;  // { a brace in a comment }
  x += 19;  // { a brace in a comment }
  x += 20;  // { a brace in a comment }
  x += 21;  // { a brace in a comment }
  x += 22;  // { a brace in a comment }
  x += 23;  // { a brace in a comment }
  x += 24;  // { a brace in a comment }
  x += 25;  // { a brace in a comment }
  x += 26;  // { a brace in a comment }
  x += 27;  // { a brace in a comment }
  x += 28;  // { a brace in a comment }
  x += 29;  // { a brace in a comment }
  x += 30;  // { a brace in a comment }
  x += 31;  // { a brace in a comment }
  x += 32;  // { a brace in a comment }
  x += 33;  // { a brace in a comment }
  x += 34;  // { a brace in a comment }
  x += 35;  // { a brace in a comment }
  x += 36;  // { a brace in a comment }
  x += 37;  // { a brace in a comment }
  x += 38;  // { a brace in a comment }
  x += 39;  // { a brace in a comment }
  x += 40;  // { a brace in a comment }
  x += 41;  // { a brace in a comment }
  x += 42;  // { a brace in a comment }
  x += 43;  // { a brace in a comment }
  x += 44;  // { a brace in a comment }
  x += 45;  // { a brace in a comment }
  x += 46;  // { a brace in a comment }
  x += 47;  // { a brace in a comment }
  x += 48;  // { a brace in a comment }
  x += 49;  // { a brace in a comment }
  x += 50;  // { a brace in a comment }
  x += 51;  // { a brace in a comment }
  x += 52;  // { a brace in a comment }
  x += 53;  // { a brace in a comment }
  x += 54;  // { a brace in a comment }
  x += 55;  // { a brace in a comment }
  x += 56;  // { a brace in a comment }
  x += 57;  // { a brace in a comment }
  x += 58;  // { a brace in a comment }
  x += 59;  // { a brace in a comment }
  x += 60;  // { a brace in a comment }
  x += 61;  // { a brace in a comment }
  x += 62;  // { a brace in a comment }
  x += 63;  // { a brace in a comment }
  x += 64;  // { a brace in a comment }
  x += 65;  // { a brace in a comment }
  x += 66;  // { a brace in a comment }
  x += 67;  // { a brace in a comment }
  x += 68;  // { a brace in a comment }
  x += 69;  // { a brace in a comment }
  x += 70;  // { a brace in a comment }
  x += 71;  // { a brace in a comment }
  x += 72;  // { a brace in a comment }
  x += 73;  // { a brace in a comment }
  x += 74;  // { a brace in a comment }
  x += 75;  // { a brace in a comment }
  x += 76;  // { a brace in a comment }
  x += 77;  // { a brace in a comment }
  x += 78;  // { a brace in a comment }
  x += 79;  // { a brace in a comment }
  x += 80;  // { a brace in a comment }
  x += 81;  // { a brace in a comment }
  x += 82;  // { a brace in a comment }
  x += 83;  // { a brace in a comment }
  x += 84;  // { a brace in a comment }
  x += 85;  // { a brace in a comment }
  x += 86;  // { a brace in a comment }
  x += 87;  // { a brace in a comment }
  x += 88;  // { a brace in a comment }
  x += 89;  // { a brace in a comment }
  x += 90;  // { a brace in a comment }
  x += 91;  // { a brace in a comment }
  x += 92;  // { a brace in a comment }
  x += 93;  // { a brace in a comment }
  x += 94;  // { a brace in a comment }
  x += 95;  // { a brace in a comment }
  x += 96;  // { a brace in a comment }
  x += 97;  // { a brace in a comment }
  x += 98;  // { a brace in a comment }
  x += 99;  // { a brace in a comment }
  return f(x);
}

int fine(int x) {
  if (x) {
    for (int i = 0; i < 3; ++i) { x += i; }
  }
  const char* r = R"(} } {)";
  return x;
}

}  // namespace fixture
